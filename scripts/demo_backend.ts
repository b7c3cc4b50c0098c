/**
 * The stand-in model server of `deno task demo`, for trying the gateway with no GPU and no Ollama: it speaks
 * Ollama's API (`/api/chat` whole or streamed, and the `/api/version`, `/api/tags`, `/api/ps` the health
 * checks ask) and answers every chat with one short sentence quoting the last user message. Run alone, it
 * prints its address.
 */

export const DEMO_MODEL = "demo-echo";

/** Words of a streamed answer come this far apart, so streaming is visible in a terminal. */
const WORD_DELAY_MS = 25;
const QUOTE_LIMIT = 200;

interface ChatBody {
  model?: string;
  stream?: boolean;
  messages?: { role?: string; content?: unknown }[];
}

/** The demo's answer to a conversation: what the tests and the printed commands look for. */
export function demoAnswer(messages: ChatBody["messages"]): string {
  const last = [...(messages ?? [])].reverse().find((m) => m.role === "user");
  const said = typeof last?.content === "string" ? last.content.trim().slice(0, QUOTE_LIMIT) : "";
  return `This is the demo backend (no model behind it). You said: ${said || "nothing"}`;
}

const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

const modelEntry = {
  name: DEMO_MODEL,
  model: DEMO_MODEL,
  modified_at: "2026-01-01T00:00:00Z",
  size: 0,
  digest: "0".repeat(64),
  details: { format: "gguf", family: "demo", parameter_size: "0B", quantization_level: "none" },
};

function chat(body: ChatBody, signal: AbortSignal): Response {
  const answer = demoAnswer(body.messages);
  const head = { model: body.model ?? DEMO_MODEL, created_at: new Date().toISOString() };
  const final = {
    ...head,
    done: true,
    done_reason: "stop",
    total_duration: 1_000_000,
    prompt_eval_count: (body.messages ?? []).reduce(
      (n, m) => n + (typeof m.content === "string" ? countWords(m.content) : 0),
      0,
    ),
    eval_count: countWords(answer),
  };
  if (body.stream === false) {
    return Response.json({ ...final, message: { role: "assistant", content: answer } });
  }
  const pieces = answer.match(/\S+\s*/g) ?? [];
  const encoder = new TextEncoder();
  const line = (payload: unknown) => encoder.encode(JSON.stringify(payload) + "\n");
  let next = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (signal.aborted) return controller.close();
      if (next < pieces.length) {
        if (next > 0) await new Promise((r) => setTimeout(r, WORD_DELAY_MS));
        controller.enqueue(
          line({ ...head, message: { role: "assistant", content: pieces[next++] }, done: false }),
        );
        return;
      }
      controller.enqueue(line({ ...final, message: { role: "assistant", content: "" } }));
      controller.close();
    },
  });
  return new Response(stream, { headers: { "Content-Type": "application/x-ndjson" } });
}

async function handle(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname;
  if (path === "/api/version") return Response.json({ version: "0.0.0-demo" });
  if (path === "/api/tags" || path === "/api/ps") return Response.json({ models: [modelEntry] });
  if (path !== "/api/chat" || req.method !== "POST") {
    return Response.json({ error: "not found" }, { status: 404 });
  }
  let body: ChatBody;
  try {
    body = await req.json();
  } catch {
    return Response.json({ error: "invalid JSON" }, { status: 400 });
  }
  return chat(body, req.signal);
}

/** Listens on 127.0.0.1, at `port` (default: a free one). */
export function startDemoBackend(port = 0): { url: string; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, handle);
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

// Alone (`deno task demo:backend`, `PORT` or 11435): a model server to register with `server add` when trying
// `deno task start` without a GPU.
if (import.meta.main) {
  const { url } = startDemoBackend(Number(Deno.env.get("PORT") ?? 11435));
  console.log(`The stand-in model server listens on ${url} (model "${DEMO_MODEL}"); Ctrl-C stops it.`);
  console.log(
    `Register it: deno task admin server add --name demo --url ${url} --model ${DEMO_MODEL}`,
  );
}
