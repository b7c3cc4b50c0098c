import assert from "node:assert/strict";
import { defaultConfig } from "../lib/config.ts";
import { Scenario } from "./harness.ts";
import {
  BAD_IMAGES,
  FIELD_RULES,
  fieldName,
  type JsonKind,
  kindOf,
  PNG,
  RawJson,
  toJsonText,
  validBody,
  withField,
} from "./support/hostile_bodies.ts";
import {
  assertNoServerErrors,
  assertServesEveryPath,
  CHAT_PATHS,
  readFaceError,
} from "./support/hostile_faces.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const VALID = toJsonText(validBody());
const bytes = (...parts: (string | number[])[]) =>
  new Uint8Array(parts.flatMap((p) => typeof p === "string" ? [...encode(p)] : p));
const deep = (depth: number, open: string, close: string, core = "") =>
  open.repeat(depth) + core + close.repeat(depth);
const giant = (n: number, item: string) => `[${Array(n).fill(item).join(",")}]`;
const body = (at: (string | number)[], value: unknown) => toJsonText(withField(validBody(), at, value));
/** A valid body of exactly `size` bytes. */
function paddedTo(size: number): string {
  const empty = toJsonText({ messages: [{ role: "user", content: "" }] });
  return toJsonText({ messages: [{ role: "user", content: "x".repeat(size - empty.length) }] });
}

interface Case {
  name: string;
  body: string | Uint8Array<ArrayBuffer>;
  /** Absent: application/json; null: no Content-Type at all. */
  contentType?: string | null;
  headers?: Record<string, string>;
  status: 400 | 413 | 415;
  message?: RegExp;
}

/** The nastiest inputs, each refused on all six paths; cases already in client_errors_test are not repeated. */
const CORPUS: Case[] = [
  { name: "truncated inside a string", body: VALID.slice(0, VALID.indexOf("hello") + 2), status: 400 },
  { name: "trailing garbage after a valid body", body: VALID + "}", status: 400, message: /invalid JSON/ },
  { name: "two JSON documents back to back", body: VALID + VALID, status: 400 },
  { name: "a NUL byte after the body", body: bytes(VALID, [0]), status: 400 },
  { name: "single-quoted JSON", body: VALID.replaceAll('"', "'"), status: 400 },
  { name: "a trailing comma", body: VALID.slice(0, -1) + ",}", status: 400 },
  { name: "a comment", body: "/* hi */" + VALID, status: 400 },
  { name: "a NaN literal", body: VALID.replace('"temperature":0.5', '"temperature":NaN'), status: 400 },
  { name: "an empty body", body: "", status: 400, message: /empty/ },
  { name: "a whitespace-only body", body: " \r\n\t ", status: 400, message: /empty/ },
  { name: "null as the body", body: "null", status: 400, message: /JSON object/ },
  { name: "a string as the body", body: '"hello"', status: 400, message: /JSON object/ },
  { name: "1e999 as the body", body: "1e999", status: 400, message: /JSON object/ },
  {
    name: "temperature 1e999 (Infinity once parsed)",
    body: body(["temperature"], new RawJson("1e999")),
    status: 400,
  },
  {
    name: "a duplicate key whose last value is wrong",
    body: VALID.slice(0, -1) + ',"messages":5}',
    status: 400,
  },
  { name: "__proto__ cannot carry the messages", body: '{"__proto__":{"messages":[]}}', status: 400 },
  {
    name: "__proto__ cannot carry a message's role",
    body: '{"messages":[{"__proto__":{"role":"user"},"content":"x"}]}',
    status: 400,
  },
  {
    name: "overlong '/' (C0 AF) in a string",
    body: bytes('{"messages":[{"role":"user","content":"', [0xc0, 0xaf], '"}]}'),
    status: 400,
    message: /UTF-8/,
  },
  {
    name: "a surrogate encoded as bytes (ED A0 80)",
    body: bytes('{"messages":[{"role":"user","content":"', [0xed, 0xa0, 0x80], '"}]}'),
    status: 400,
    message: /UTF-8/,
  },
  {
    name: "a Latin-1 é (E9)",
    body: bytes('{"messages":[{"role":"user","content":"caf', [0xe9], '"}]}'),
    status: 400,
    message: /UTF-8/,
  },
  {
    name: "a UTF-16 body",
    body: new Uint8Array([0xff, 0xfe, ...[...VALID].flatMap((c) => [c.charCodeAt(0), 0])]),
    status: 400,
  },
  {
    name: "a gzip body",
    body: new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xab, 0xae, 5, 0]),
    headers: { "Content-Encoding": "gzip" },
    status: 400,
  },
  {
    name: "content nested 100,000 arrays deep",
    body: body(["messages", 4, "content"], new RawJson(deep(100_000, "[", "]"))),
    status: 400,
  },
  {
    name: "a message nested 100,000 objects deep",
    body: body(["messages", 4], new RawJson(deep(100_000, '{"a":', "}", "1"))),
    status: 400,
  },
  {
    name: "the body as 100,000 nested arrays",
    body: deep(100_000, "[", "]"),
    status: 400,
    message: /JSON object/,
  },
  {
    name: "a 1 MB role",
    body: body(["messages", 4, "role"], "u".repeat(1 << 20)),
    status: 400,
    message: /role/,
  },
  {
    name: "a 15 MB content beside a wrong stream flag",
    body: toJsonText({ messages: [{ role: "user", content: "x".repeat(15 << 20) }], stream: "yes" }),
    status: 400,
    message: /"stream"/,
  },
  // Millions of wrong items once cost seconds and gigabytes to describe, and could exhaust the heap.
  {
    name: "5 million wrong messages (10 MB, under the limit)",
    body: `{"messages":${giant(5_000_000, "1")}}`,
    status: 400,
    message: /"messages\[0\]"/,
  },
  {
    name: "a million wrong stop entries",
    body: body(["stop"], new RawJson(giant(1_000_000, "{}"))),
    status: 400,
    message: /"stop\[0\]" must be a string/,
  },
  {
    name: "a million images, none a string",
    body: body(["messages", 1, "images"], new RawJson(giant(1_000_000, "0"))),
    status: 400,
  },
  {
    name: "200,000 content parts, the last one bad",
    body: body(
      ["messages", 1, "content"],
      new RawJson(`[${'{"type":"text","text":"x"},'.repeat(199_999)}{"type":"audio"}]`),
    ),
    status: 400,
    message: /content\[199999\]/,
  },
  {
    name: "a valid body 1 byte over the limit",
    body: paddedTo(defaultConfig().maxBodyBytes + 1),
    status: 413,
  },
  {
    name: "a streaming request with a bad role gets a JSON error, not a stream",
    body: toJsonText(withField({ ...validBody(), stream: true }, ["messages", 4, "role"], "wizard")),
    status: 400,
    message: /"messages\[4\]\.role"/,
  },
  { name: "no Content-Type", body: VALID, contentType: null, status: 415 },
  { name: "form-encoded", body: VALID, contentType: "application/x-www-form-urlencoded", status: 415 },
  { name: "multipart", body: VALID, contentType: "multipart/form-data; boundary=x", status: 415 },
  { name: "application/jsonp", body: VALID, contentType: "application/jsonp", status: 415 },
  {
    name: "a 60 KB Content-Type, echoed only in part",
    body: VALID,
    contentType: `text/${"a".repeat(60_000)}`,
    status: 415,
    message: /^.{0,200}$/,
  },
];

/** Far above what any refusal here takes (well under a second), far below what a stuck parser takes. */
const ANSWER_WITHIN_MS = 5_000;

const SAMPLE: Record<JsonKind, unknown> = {
  null: null,
  boolean: true,
  number: 1,
  string: "x",
  array: [],
  object: {},
};

async function refuse(s: Scenario, key: string, c: Case) {
  for (const { path, face } of CHAT_PATHS) {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}`, ...c.headers };
    if (c.contentType !== null) headers["Content-Type"] = c.contentType ?? "application/json";
    const payload = typeof c.body === "string" ? encode(c.body) : c.body;
    const res = await fetch(`${s.gw.url}${path}`, {
      method: "POST",
      headers,
      body: payload,
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    }).catch((error) =>
      assert.fail(`${c.name} on ${path}: no answer within ${ANSWER_WITHIN_MS} ms (${error})`)
    );
    const refusal = await readFaceError(res, face, `${c.name} on ${path}`);
    assert.equal(refusal.status, c.status, `${c.name} on ${path}: ${refusal.message}`);
    if (c.message) assert.match(refusal.message, c.message, `${c.name} on ${path}`);
  }
}

Deno.test("hostile bodies: each refused with a 4xx in the path's format, none forwarded", async (t) => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ vision: true, tools: true, thinking: true });
  await t.step("(the unmutated body is accepted everywhere)", () => assertServesEveryPath(s.gw, key));
  const served = s.fake().chats.length;
  for (const c of CORPUS) await t.step(c.name, () => refuse(s, key, c));

  for (const image of BAD_IMAGES) {
    await t.step(`image ${JSON.stringify(image)}`, async () => {
      await refuse(s, key, {
        name: "images[]",
        body: body(["messages", 1, "images", 0], image),
        status: 400,
      });
      if (!image.startsWith("data:")) return;
      const part = body(["messages", 1, "content", 1, "image_url"], { url: image });
      await refuse(s, key, { name: "image_url part", body: part, status: 400 });
    });
  }

  for (const [i, rule] of FIELD_RULES.entries()) {
    const refused = [
      ...(Object.keys(SAMPLE) as JsonKind[]).filter((k) => !rule.kinds.includes(k)).map((k) => SAMPLE[k]),
      ...rule.bad ?? [],
    ];
    if (rule.oneOf) refused.push("NOT-" + rule.oneOf[0]);
    await t.step(`${fieldName(rule.at)} refuses ${refused.length} values`, async () => {
      for (const [j, value] of refused.entries()) {
        // Rotating the path keeps the field table to one request per value while covering all six paths.
        const { path, face } = CHAT_PATHS[(i + j) % CHAT_PATHS.length];
        const res = await s.gw.post(path, key, body(rule.at, value));
        const where = `${fieldName(rule.at)} = ${
          value instanceof RawJson ? value.text : kindOf(value)
        } on ${path}`;
        assert.equal((await readFaceError(res, face, where)).status, 400, where);
      }
    });
  }

  await t.step("nothing reached the backend, no 5xx, every path still serves", async () => {
    assert.equal(s.fake().chats.length, served, "a refused request reached the backend");
    assertNoServerErrors(s.gw);
    await assertServesEveryPath(s.gw, key);
  });
});

Deno.test("data: images of any non-image type are refused, never forwarded, even beside a valid image", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ vision: true });
  for (const type of ["text/plain", "text/html", "application/pdf", "application/javascript", "audio/wav"]) {
    const uri = `data:${type};base64,${PNG}`;
    const a = withField(validBody(), ["messages", 1, "content", 1, "image_url", "url"], uri);
    const b = withField(validBody(), ["messages", 1, "images"], [PNG, uri]);
    for (
      const [path, face, sent] of [["/v1/chat/completions", "A", a], ["/api/v1/chat.php", "B", b]] as const
    ) {
      const refusal = await readFaceError(await s.gw.post(path, key, sent), face, `${type} on ${path}`);
      assert.match(refusal.message, new RegExp(`must be an image, got ${type}`));
    }
  }
  assert.equal(s.fake().chats.length, 0);
});
