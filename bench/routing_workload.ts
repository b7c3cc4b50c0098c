/**
 * The routing bench's workload: many clients, each holding multi-turn conversations (a long system prompt,
 * then turns that carry the whole history, each answer appended before the next question), plus bursts of
 * one-off requests. Everything is drawn from a fixed seed before the run, so two runs send the same requests
 * in the same rhythm; only the answers' timing differs. Requests stream (format A), so time to first token is
 * the first content chunk the client reads.
 */
// @ts-types="@types/seedrandom"
import seedrandom from "seedrandom";
import { MODELS } from "./routing_fleet.ts";

export const WORKLOAD = {
  clients: 16,
  conversationsPerClient: 3,
  turns: [3, 6] as const,
  /** Words of the system prompt, of each question, and tokens of each answer. */
  systemWords: [300, 900] as const,
  questionWords: [20, 120] as const,
  answerTokens: [24, 64] as const,
  thinkMs: [100, 1000] as const,
  /** Model shares: one busy model, two quieter ones. */
  modelShares: [0.5, 0.3, 0.2],
  bursts: 4,
  burstSize: 16,
  burstEveryMs: 2_500,
};

interface Turn {
  question: string;
  answerTokens: number;
  thinkMs: number;
}

interface Conversation {
  model: string;
  system: string;
  turns: Turn[];
}

export interface Sample {
  /** A conversation's turn (its number, from 1) or a burst's one-off request (0). */
  turn?: number;
  ok: boolean;
  ttftMs: number;
  totalMs: number;
  /** Why it failed: the status and error code, a stream cut short, or what was thrown. */
  failure?: string;
}

function words(random: () => number, [lo, hi]: readonly [number, number], tag: string): string {
  const n = lo + Math.floor(random() * (hi - lo + 1));
  return Array.from({ length: n }, (_, i) => `${tag}${Math.floor(random() * 5000)}x${i}`).join(" ");
}

const between = (random: () => number, [lo, hi]: readonly [number, number]) =>
  lo + Math.floor(random() * (hi - lo + 1));

function pickModel(random: () => number): string {
  let u = random();
  for (const [i, share] of WORKLOAD.modelShares.entries()) {
    if ((u -= share) < 0) return MODELS[i];
  }
  return MODELS[0];
}

function conversation(random: () => number, id: string): Conversation {
  return {
    model: pickModel(random),
    system: words(random, WORKLOAD.systemWords, `s${id}`),
    turns: Array.from({ length: between(random, WORKLOAD.turns) }, () => ({
      question: words(random, WORKLOAD.questionWords, "q"),
      answerTokens: between(random, WORKLOAD.answerTokens),
      thinkMs: between(random, WORKLOAD.thinkMs),
    })),
  };
}

/** The whole workload, drawn once from the seed. */
export function plan(seed = "routing-bench") {
  const random = seedrandom(seed);
  const clients = Array.from(
    { length: WORKLOAD.clients },
    (_, c) =>
      Array.from({ length: WORKLOAD.conversationsPerClient }, (_, k) => conversation(random, `${c}-${k}`)),
  );
  const bursts = Array.from(
    { length: WORKLOAD.bursts },
    (_, b) => Array.from({ length: WORKLOAD.burstSize }, (_, i) => conversation(random, `b${b}-${i}`)),
  );
  return { clients, bursts };
}

/** Streams one chat; returns the answer text and the timings. */
export async function chat(
  url: string,
  secret: string,
  messages: { role: string; content: string }[],
  maxTokens: number,
): Promise<Sample & { text: string }> {
  const started = performance.now();
  let ttft = NaN;
  let text = "";
  let done = false;
  try {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: "any", messages, stream: true, max_tokens: maxTokens }),
    });
    if (res.status !== 200 || !res.body) {
      const body = await res.text().catch(() => "");
      const code = /"code":\s*"([^"]+)"/.exec(body)?.[1] ?? "";
      const failure = `${res.status} ${code}`.trim();
      return { ok: false, ttftMs: NaN, totalMs: performance.now() - started, text, failure };
    }
    let buffered = "";
    for await (const piece of res.body.pipeThrough(new TextDecoderStream())) {
      buffered += piece;
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const event = buffered.slice(0, end).replace(/^data: /, "");
        buffered = buffered.slice(end + 2);
        if (event === "[DONE]") {
          done = true;
          continue;
        }
        const content = JSON.parse(event).choices?.[0]?.delta?.content;
        if (content) {
          if (Number.isNaN(ttft)) ttft = performance.now() - started;
          text += content;
        }
      }
    }
  } catch (error) {
    const failure = `thrown: ${error instanceof Error ? error.message : error}`;
    return { ok: false, ttftMs: ttft, totalMs: performance.now() - started, text, failure };
  }
  const failure = done ? undefined : "stream ended without [DONE]";
  return { ok: done, ttftMs: ttft, totalMs: performance.now() - started, text, failure };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function converse(
  url: string,
  keys: Map<string, string>,
  c: Conversation,
  out: Sample[],
  burst = false,
) {
  const messages = [{ role: "system", content: c.system }];
  for (const [i, turn] of c.turns.entries()) {
    messages.push({ role: "user", content: turn.question });
    const r = await chat(url, keys.get(c.model)!, messages, turn.answerTokens);
    out.push({ ...r, turn: burst ? 0 : i + 1 });
    if (!r.ok) return;
    messages.push({ role: "assistant", content: r.text });
    await sleep(turn.thinkMs);
  }
}

/** Runs the workload against a gateway; resolves with every request's sample and the wall time. */
export async function runWorkload(url: string, keys: Map<string, string>, workload = plan()) {
  const samples: Sample[] = [];
  const started = performance.now();
  const clients = workload.clients.map(async (conversations) => {
    for (const c of conversations) await converse(url, keys, c, samples);
  });
  const bursts = workload.bursts.map(async (burst, b) => {
    await sleep((b + 1) * WORKLOAD.burstEveryMs);
    await Promise.all(
      burst.map((c) => converse(url, keys, { ...c, turns: c.turns.slice(0, 1) }, samples, true)),
    );
  });
  await Promise.all([...clients, ...bursts]);
  return { samples, wallMs: performance.now() - started };
}
