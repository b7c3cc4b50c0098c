/**
 * Generated answers of misbehaving model servers: a valid Ollama or OpenAI-compatible answer (whole or
 * streamed) built from a few facts, then damaged. Damage at a generated place in the JSON: a hostile value
 * (negative, fractional, huge or non-numeric counts, wrong types, nulls, unknown finish reasons), a field
 * taken away or an extra one added; damage to the stream: an event duplicated, dropped, swapped or replaced
 * by garbage; and damage to the bytes: invalid UTF-8, and the body cut into pieces anywhere, inside a
 * character too. The fake backend sends the result byte for byte (its "scripted" mode).
 */
import fc from "fast-check";
import type { ScriptedBody } from "../fakes/fake_backend.ts";

export type Adapter = "ollama" | "openai";

/** What a server puts where a count, a name or an object belongs, when it misbehaves. */
const HOSTILE: readonly unknown[] = [
  -5,
  -2,
  -1,
  0,
  0.5,
  1.5,
  -0.5,
  2 ** 24 + 1,
  2 ** 31,
  2 ** 53 + 2,
  1e20,
  1e308,
  "12",
  "",
  "weird_reason",
  "length",
  "tool_calls",
  "x".repeat(2000),
  null,
  true,
  false,
  {},
  [],
  { n: 1 },
  [1, "a"],
];

/** A marker character in every text: the bytes that invalid UTF-8 replaces. */
const MARK = "¤";
const MARK_BYTES = new TextEncoder().encode(MARK);
const BAD_UTF8 = [[0xff], [0xc2], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x8e]];

export interface AnswerFacts {
  content: string[];
  thinking: string;
  toolCall: boolean;
  length: boolean;
  prompt: number;
  completion: number;
}

export type Damage =
  | { kind: "replace"; at: number; value: number }
  | { kind: "delete"; at: number }
  | { kind: "extra"; at: number; value: number }
  | { kind: "duplicate" | "drop" | "garbage"; event: number }
  | { kind: "swap"; event: number; other: number };

export interface AnswerCase {
  adapter: Adapter;
  stream: boolean;
  /** Index into the six chat paths. */
  path: number;
  includeUsage: boolean;
  facts: AnswerFacts;
  damage: Damage[];
  badUtf8?: number;
  cuts: number[];
}

const WORDS = ["Hello ", "wörld ", "日本 ", "🎉 ", `${MARK} `, "plain ", "text "];

const facts: fc.Arbitrary<AnswerFacts> = fc.record({
  content: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 5 }).map((w) => [MARK, ...w]),
  thinking: fc.constantFrom("", `Let me think ${MARK}`),
  toolCall: fc.boolean(),
  length: fc.boolean(),
  prompt: fc.integer({ min: 0, max: 5000 }),
  completion: fc.integer({ min: 0, max: 5000 }),
});

const damage: fc.Arbitrary<Damage> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), value: fc.nat() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("extra" as const), at: fc.nat(), value: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constantFrom("duplicate" as const, "drop" as const), event: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("garbage" as const), event: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("swap" as const), event: fc.nat(), other: fc.nat() }),
  },
);

export function answerCases(adapter: Adapter): fc.Arbitrary<AnswerCase> {
  return fc.record({
    adapter: fc.constant(adapter),
    stream: fc.boolean(),
    path: fc.nat({ max: 5 }),
    includeUsage: fc.boolean(),
    facts,
    damage: fc.array(damage, { maxLength: 3 }),
    badUtf8: fc.option(fc.nat({ max: BAD_UTF8.length - 1 }), { nil: undefined, freq: 5 }),
    cuts: fc.array(fc.nat(), { maxLength: 6 }),
  });
}

/** Whether the answer is sent as the server would send it: the gateway must then serve it, counts and all. */
export const undamaged = (c: AnswerCase) => c.damage.length === 0 && c.badUtf8 === undefined;

const TOOL = { name: "look", args: { city: `Oslo ${MARK}` } };

function ollamaEvents(f: AnswerFacts, stream: boolean): unknown[] {
  const head = { model: "m1", created_at: "2026-11-24T10:00:00.123456Z" };
  const calls = f.toolCall
    ? [{ id: "call_ab12cd34", function: { index: 0, name: TOOL.name, arguments: TOOL.args } }]
    : undefined;
  const final = {
    ...head,
    done: true,
    done_reason: f.length ? "length" : "stop",
    total_duration: 912000000,
    load_duration: 41000000,
    prompt_eval_count: f.prompt,
    prompt_eval_duration: 120000000,
    eval_count: f.completion,
    eval_duration: 700000000,
  };
  if (!stream) {
    const message = {
      role: "assistant",
      content: f.content.join(""),
      thinking: f.thinking,
      tool_calls: calls,
    };
    return [{ ...final, message }];
  }
  const lines: unknown[] = [];
  if (f.thinking) {
    lines.push({ ...head, message: { role: "assistant", content: "", thinking: f.thinking }, done: false });
  }
  for (const piece of f.content) {
    lines.push({ ...head, message: { role: "assistant", content: piece }, done: false });
  }
  if (calls) {
    lines.push({ ...head, message: { role: "assistant", content: "", tool_calls: calls }, done: false });
  }
  lines.push({ ...final, message: { role: "assistant", content: "" } });
  return lines;
}

function openaiEvents(f: AnswerFacts, stream: boolean): unknown[] {
  const head = { id: "chatcmpl-9f2c1e", created: 1787310000, model: "m2" };
  const usage = {
    prompt_tokens: f.prompt,
    completion_tokens: f.completion,
    total_tokens: f.prompt + f.completion,
  };
  const finish = f.toolCall ? "tool_calls" : f.length ? "length" : "stop";
  const args = JSON.stringify(TOOL.args);
  if (!stream) {
    const message = {
      role: "assistant",
      content: f.content.join(""),
      reasoning_content: f.thinking || null,
      tool_calls: f.toolCall
        ? [{ id: "call_1", type: "function", function: { name: TOOL.name, arguments: args } }]
        : [],
    };
    return [{
      ...head,
      object: "chat.completion",
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage,
    }];
  }
  const chunk = (delta: unknown, finishReason: string | null = null) => ({
    ...head,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const events: unknown[] = [chunk({ role: "assistant", content: "" })];
  if (f.thinking) events.push(chunk({ reasoning_content: f.thinking }));
  for (const piece of f.content) events.push(chunk({ content: piece }));
  if (f.toolCall) {
    events.push(
      chunk({
        tool_calls: [{
          index: 0,
          id: "call_1",
          type: "function",
          function: { name: TOOL.name, arguments: "" },
        }],
      }),
    );
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 5) } }] }));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(5) } }] }));
  }
  events.push(chunk({}, finish));
  events.push({ ...head, object: "chat.completion.chunk", choices: [], usage });
  events.push("[DONE]");
  return events;
}

/** Every place in a JSON value, as the container and the key or index that names it. */
function places(value: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []) {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([value, i]);
      places(v, out);
    });
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, k]);
      places(v, out);
    }
  }
  return out;
}

function damaged(events: unknown[], d: Damage): unknown[] {
  const n = events.length;
  if (d.kind === "duplicate") events.splice(d.event % n, 0, structuredClone(events[d.event % n]));
  else if (d.kind === "drop" && n > 1) events.splice(d.event % n, 1);
  else if (d.kind === "garbage") events[d.event % n] = "}}not json{{";
  else if (d.kind === "swap") {
    [events[d.event % n], events[d.other % n]] = [events[d.other % n], events[d.event % n]];
  } else if (d.kind === "replace" || d.kind === "delete" || d.kind === "extra") {
    const all = places(events).filter(([container]) => container !== events);
    if (!all.length) return events;
    const [container, key] = all[d.at % all.length];
    if (d.kind === "replace") {
      (container as Record<string | number, unknown>)[key] = structuredClone(
        HOSTILE[d.value % HOSTILE.length],
      );
    } else if (d.kind === "extra") {
      const target = (container as Record<string | number, unknown>)[key];
      const hostile = structuredClone(HOSTILE[d.value % HOSTILE.length]);
      if (Array.isArray(target)) target.push(hostile);
      else if (target && typeof target === "object") {
        (target as Record<string, unknown>)[`x_extra_${d.value}`] = hostile;
      }
    } else if (Array.isArray(container)) container.splice(key as number, 1);
    else delete container[key as string];
  }
  return events;
}

function withBadUtf8(bytes: Uint8Array<ArrayBuffer>, variant: number): Uint8Array<ArrayBuffer> {
  for (let i = 0; i + 1 < bytes.length; i++) {
    if (bytes[i] === MARK_BYTES[0] && bytes[i + 1] === MARK_BYTES[1]) {
      const bad = BAD_UTF8[variant];
      const out = new Uint8Array(bytes.length - 2 + bad.length);
      out.set(bytes.subarray(0, i));
      out.set(bad, i);
      out.set(bytes.subarray(i + 2), i + bad.length);
      return out;
    }
  }
  return bytes;
}

/** The case's answer, as the fake sends it. */
export function scriptFor(c: AnswerCase): ScriptedBody {
  let events = c.adapter === "ollama" ? ollamaEvents(c.facts, c.stream) : openaiEvents(c.facts, c.stream);
  for (const d of c.damage) events = damaged(events, d);
  const text = (e: unknown) => (typeof e === "string" ? e : JSON.stringify(e));
  const body = !c.stream
    ? events.map(text).join("")
    : c.adapter === "ollama"
    ? events.map((e) => text(e) + "\n").join("")
    : events.map((e) => `data: ${text(e)}\n\n`).join("");
  let bytes = new TextEncoder().encode(body);
  if (c.badUtf8 !== undefined) bytes = withBadUtf8(bytes, c.badUtf8);
  const cuts = [...new Set(c.cuts.map((n) => n % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > from) pieces.push(bytes.slice(from, cut));
    from = cut;
  }
  const contentType = !c.stream
    ? "application/json"
    : c.adapter === "ollama"
    ? "application/x-ndjson"
    : "text/event-stream";
  return { contentType, pieces };
}
