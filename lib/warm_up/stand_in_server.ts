/**
 * @module The model server a start-up warm-up talks to: a real HTTP server on the loopback, in the gateway's
 * own process, answering chats as an Ollama (`/api/chat`) and an OpenAI-compatible server such as vLLM
 * (`/v1/chat/completions`) answer them, streamed or whole, with the fields those servers send. The answers
 * look like real ones on purpose: the code that decodes them is optimized for what it saw first, and a shape
 * the real servers never send would only teach it the wrong one. It answers the health probes too (Ollama's
 * `/api/version`, `/api/tags`, `/api/ps`; `/v1/models`), listing the models it was started for, so that the
 * warm-up's routing works with what a probed server tells, as the real gateway's does.
 */

/** Pieces of every answer; a request's output ceiling takes fewer. */
const PIECES = ["Hello", "!", " How", " can", " I", " help", " you", " today", "?"];
const MODEL_FIELD_MAX = 200;

interface ChatAsk {
  model?: unknown;
  stream?: unknown;
  max_tokens?: unknown;
  stream_options?: { include_usage?: unknown };
  options?: { num_predict?: unknown };
}

const encoder = new TextEncoder();
const JSON_HEADERS = { "Content-Type": "application/json; charset=utf-8" };

function pieceCount(limit: unknown): number {
  return typeof limit === "number" && Number.isInteger(limit) && limit > 0
    ? Math.min(limit, PIECES.length)
    : PIECES.length;
}

function modelOf(ask: ChatAsk): string {
  return typeof ask.model === "string" ? ask.model.slice(0, MODEL_FIELD_MAX) : "model";
}

function ollamaAnswer(ask: ChatAsk): Response {
  const model = modelOf(ask);
  const pieces = PIECES.slice(0, pieceCount(ask.options?.num_predict));
  const done = (content: string) => ({
    model,
    created_at: new Date().toISOString(),
    message: { role: "assistant", content },
    done: true,
    done_reason: pieces.length < PIECES.length ? "length" : "stop",
    total_duration: 412_733_000,
    load_duration: 21_318_000,
    prompt_eval_count: 26,
    prompt_eval_duration: 61_002_000,
    eval_count: pieces.length,
    eval_duration: 318_960_000,
  });
  if (ask.stream === false) {
    return new Response(JSON.stringify(done(pieces.join(""))), { headers: JSON_HEADERS });
  }
  const lines = pieces.map((content) =>
    JSON.stringify({
      model,
      created_at: new Date().toISOString(),
      message: { role: "assistant", content },
      done: false,
    })
  );
  lines.push(JSON.stringify(done("")));
  return new Response(encoder.encode(lines.join("\n") + "\n"), {
    headers: { "Content-Type": "application/x-ndjson" },
  });
}

function openaiAnswer(ask: ChatAsk): Response {
  const model = modelOf(ask);
  const pieces = PIECES.slice(0, pieceCount(ask.max_tokens));
  const finish = pieces.length < PIECES.length ? "length" : "stop";
  const id = `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 26, total_tokens: 26 + pieces.length, completion_tokens: pieces.length };
  if (ask.stream !== true) {
    return new Response(
      JSON.stringify({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{
          index: 0,
          message: { role: "assistant", content: pieces.join(""), tool_calls: [] },
          logprobs: null,
          finish_reason: finish,
          stop_reason: null,
        }],
        usage,
      }),
      { headers: JSON_HEADERS },
    );
  }
  const chunk = (delta: Record<string, string>, finishReason: string | null) =>
    JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
  const events = [chunk({ role: "assistant", content: "" }, null)];
  for (const content of pieces) events.push(chunk({ content }, null));
  events.push(chunk({ content: "" }, finish));
  if (ask.stream_options?.include_usage === true) {
    events.push(JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage }));
  }
  events.push("[DONE]");
  return new Response(encoder.encode(events.map((e) => `data: ${e}\n\n`).join("")), {
    headers: { "Content-Type": "text/event-stream" },
  });
}

/** The probes' answers, as an Ollama and an OpenAI-compatible server give them, for `models`. */
function probeAnswers(models: readonly string[]): Map<string, string> {
  const modifiedAt = new Date().toISOString();
  const listed = models.map((name) => ({
    name,
    model: name,
    modified_at: modifiedAt,
    size: 1_000_000,
    digest: "0".repeat(64),
    details: { format: "gguf", family: "llama", families: ["llama"], parameter_size: "1B" },
  }));
  return new Map([
    ["/api/version", JSON.stringify({ version: "0.12.0" })],
    ["/api/tags", JSON.stringify({ models: listed })],
    ["/api/ps", JSON.stringify({ models: listed })],
    ["/v1/models", JSON.stringify({ object: "list", data: models.map((id) => ({ id, object: "model" })) })],
  ]);
}

async function answer(request: Request, probes: Map<string, string>): Promise<Response> {
  const path = new URL(request.url).pathname;
  const probed = request.method === "GET" ? probes.get(path) : undefined;
  if (probed !== undefined) return new Response(probed, { headers: JSON_HEADERS });
  if (request.method !== "POST" || (path !== "/api/chat" && path !== "/v1/chat/completions")) {
    return new Response('{"error":"not found"}', { status: 404, headers: JSON_HEADERS });
  }
  let ask: ChatAsk;
  try {
    ask = await request.json();
  } catch {
    return new Response('{"error":"invalid JSON"}', { status: 400, headers: JSON_HEADERS });
  }
  return path === "/api/chat" ? ollamaAnswer(ask) : openaiAnswer(ask);
}

export interface StandInServer {
  url: string;
  close(): Promise<void>;
}

/** `models`: what its model lists name. */
export function startStandInServer(models: readonly string[] = []): StandInServer {
  const probes = probeAnswers(models);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => answer(request, probes),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}
