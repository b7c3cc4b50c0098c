/**
 * A scriptable fake Ollama server on 127.0.0.1 for tests: a real HTTP server that records what it received
 * and answers /api/chat (streamed or not), /api/tags, /api/ps and /api/version, with fault modes. It can stop
 * listening and listen again on the same port, so a test can take a backend away and bring it back.
 */

import type { FakeMode, ReceivedChat, ScriptedReply, StreamFault } from "./fake_backend.ts";
import { FakeBackendBase, pieces, words } from "./fake_base.ts";

export type { FakeMode, ReceivedChat, ScriptedReply, StreamFault };

/** A model entry as /api/tags and /api/ps list it. */
function modelEntry(name: string) {
  return {
    name,
    model: name,
    modified_at: "2026-01-01T00:00:00Z",
    size: 2_019_393_189,
    digest: "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
    details: {
      parent_model: "",
      format: "gguf",
      family: "llama",
      families: ["llama"],
      parameter_size: "3.2B",
      quantization_level: "Q4_K_M",
    },
  };
}

export class FakeOllama extends FakeBackendBase {
  /** The models /api/ps lists as loaded; when unset /api/ps answers 404, as a server without it would. */
  loaded?: string[];

  private constructor(name: string) {
    super(name, "/api/chat");
  }

  static start(name = "fake"): FakeOllama {
    return new FakeOllama(name);
  }

  protected async handle(path: string, req: Request): Promise<Response> {
    if (path === "/api/version" || path === "/api/tags" || path === "/api/ps") return this.#probe(path, req);
    if (path !== "/api/chat") return Response.json({ error: "not found" }, { status: 404 });
    const body = await req.json();
    this.record(path, req, body);
    return this.#chat(body, req.signal);
  }

  #probe(path: string, req: Request): Response | Promise<Response> {
    if (this.probeFault === "hang") return this.hang(req.signal);
    if (this.probeFault === "error") return Response.json({ error: "internal error" }, { status: 500 });
    if (path === "/api/version") return Response.json({ version: "0.33.0" });
    if (path === "/api/tags") return Response.json({ models: this.models.map(modelEntry) });
    if (!this.loaded) return Response.json({ error: "not found" }, { status: 404 });
    return Response.json({
      models: this.loaded.map((name) => ({
        ...modelEntry(name),
        expires_at: "2026-01-01T00:05:00Z",
        size_vram: 2_019_393_189,
        context_length: 4096,
      })),
    });
  }

  #chat(body: Record<string, unknown>, signal: AbortSignal): Response | Promise<Response> {
    const messages = (body.messages ?? []) as { content?: string; images?: string[] }[];
    const formatFree = this.formatFreeFault(signal);
    if (formatFree) return formatFree;
    switch (this.mode) {
      case "error":
        return Response.json({ error: "runner crashed at http://10.0.0.9:1234/completion" }, { status: 500 });
      case "busy":
        return Response.json({ error: "server busy, please try again." }, { status: 503 });
      case "not-found":
        return Response.json({ error: `model '${body.model}' not found` }, { status: 404 });
      case "reject":
        return Response.json({ error: `"${body.model}" does not support thinking` }, { status: 400 });
      case "text-only":
        if (messages.some((m) => m.images?.length)) {
          return Response.json({ error: "this model is missing data required for image input" }, {
            status: 500,
          });
        }
    }
    const r = this.reply(body);
    const content = r.content ?? "";
    const message: Record<string, unknown> = { role: "assistant", content };
    if (r.thinking) message.thinking = r.thinking;
    if (r.toolCalls && body.tools) {
      message.tool_calls = r.toolCalls.map((c, index) => ({
        ...(c.id ? { id: c.id } : {}),
        function: { index, ...c },
      }));
    }
    const final = {
      model: body.model,
      created_at: new Date().toISOString(),
      message,
      done: true,
      done_reason: r.doneReason ?? "stop",
      total_duration: 1_000_000,
      prompt_eval_count: r.promptTokens ?? messages.reduce((n, m) => n + words(m.content ?? ""), 0),
      eval_count: r.completionTokens ?? words(content),
    };
    if (body.stream === false) return Response.json(final);
    return this.#stream(final, r);
  }

  /** Streams the answer as Ollama does: thinking, then content word by word, tool calls, and a final done line. */
  #stream(final: Record<string, unknown>, r: ScriptedReply): Response {
    const head = { model: final.model, created_at: final.created_at };
    const message = final.message as Record<string, unknown>;
    const chunks: Record<string, unknown>[] = [];
    if (r.thinking) {
      chunks.push({
        ...head,
        message: { role: "assistant", content: "", thinking: r.thinking },
        done: false,
      });
    }
    for (const piece of pieces(r.content ?? "")) {
      chunks.push({ ...head, message: { role: "assistant", content: piece }, done: false });
    }
    if (message.tool_calls) {
      chunks.push({
        ...head,
        message: { role: "assistant", content: "", tool_calls: message.tool_calls },
        done: false,
      });
    }
    const { tool_calls: _t, thinking: _th, ...finalMessage } = message;
    const last = { ...final, message: { ...finalMessage, content: "" } };
    const line = (payload: unknown) => JSON.stringify(payload) + "\n";
    return this.streamed({
      contentType: "application/x-ndjson",
      chunks: chunks.map(line),
      closing: [line(last)],
      faults: { garbage: ["}}not json{{\n"], "error-line": [line({ error: "CUDA error: out of memory" })] },
    });
  }
}
