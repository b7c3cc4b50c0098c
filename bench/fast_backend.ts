/**
 * A fake Ollama for the load bench, run as its own process: it must cost as little as possible, so that the
 * figures measure what sits in front of it. Answers are built once; a streamed answer has
 * `options.num_predict` lines (8 when absent), numbered `w0 w1 …`, so one backend serves the first-byte, the
 * chunk-rate and the long-stream runs.
 * Usage: `deno run --allow-net bench/fast_backend.ts`; prints `listening on http://127.0.0.1:PORT`.
 */

const MODEL = "m1";
const encoder = new TextEncoder();

const whole = JSON.stringify({
  model: MODEL,
  created_at: "2026-01-01T00:00:00Z",
  message: { role: "assistant", content: "Hello from the bench backend." },
  done: true,
  done_reason: "stop",
  total_duration: 1_000_000,
  prompt_eval_count: 3,
  eval_count: 5,
});
/** The `i`-th chunk; numbered, so a soak can check each arrives once and in order. */
const piece = (i: number) =>
  JSON.stringify({
    model: MODEL,
    created_at: "2026-01-01T00:00:00Z",
    message: { role: "assistant", content: `w${i} ` },
    done: false,
  }) + "\n";
const last = JSON.stringify({
  model: MODEL,
  created_at: "2026-01-01T00:00:00Z",
  message: { role: "assistant", content: "" },
  done: true,
  done_reason: "stop",
  total_duration: 1_000_000,
  prompt_eval_count: 3,
  eval_count: 8,
}) + "\n";

/** Streamed answers by length; lengths are few (the bench uses two), so they are built once each. */
const streams = new Map<number, Uint8Array<ArrayBuffer>>();
function streamBody(chunks: number): Uint8Array<ArrayBuffer> {
  let body = streams.get(chunks);
  if (!body) {
    body = encoder.encode(Array.from({ length: chunks }, (_, i) => piece(i)).join("") + last);
    if (streams.size < 16) streams.set(chunks, body);
  }
  return body;
}

const probes: Record<string, string> = {
  "/api/version": JSON.stringify({ version: "0.33.0" }),
  "/api/tags": JSON.stringify({ models: [{ name: MODEL, model: MODEL }] }),
  "/api/ps": JSON.stringify({ models: [{ name: MODEL, model: MODEL }] }),
};
const JSON_HEADERS = { "Content-Type": "application/json; charset=utf-8" };
const NDJSON_HEADERS = { "Content-Type": "application/x-ndjson" };

async function handle(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname;
  if (path !== "/api/chat") {
    const probe = probes[path];
    return new Response(probe ?? '{"error":"not found"}', {
      status: probe ? 200 : 404,
      headers: JSON_HEADERS,
    });
  }
  const body = await req.json() as { stream?: boolean; options?: { num_predict?: number } };
  if (body.stream === false) return new Response(whole, { headers: JSON_HEADERS });
  const chunks = Math.min(Math.max(Math.floor(body.options?.num_predict ?? 8), 1), 1_000_000);
  return new Response(streamBody(chunks), { headers: NDJSON_HEADERS });
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
}, handle);
