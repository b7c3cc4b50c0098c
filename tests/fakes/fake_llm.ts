/**
 * Fake LLM servers that behave like the real ones under load, for routing tests and the routing bench: each
 * is an `LlmEngine` (loaded models, slots, prefix cache, token rates) behind a wire format. `FakeLlmOllama`
 * answers /api/chat and tells the truth on /api/ps; `FakeLlmVllm` answers /v1/chat/completions and reports
 * running and waiting requests and cache figures on /metrics, as vLLM does. Answers are streamed token by
 * token as they are generated, so time to first token is real.
 */
import { type EngineOptions, LlmEngine, type Message } from "./llm_engine.ts";
import { LoopbackServer } from "./loopback_server.ts";

type Json = Record<string, unknown>;

export interface FakeLlmOptions extends Partial<EngineOptions> {
  /** Models the server carries (can load). */
  models: string[];
  /** Tokens generated when the request sets no limit. */
  defaultOutputTokens?: number;
}

const DEFAULTS: EngineOptions = {
  slots: 2,
  modelMemory: 2,
  loadMs: 300,
  promptMsPerToken: 0.2,
  tokenMs: 2,
  cacheEntries: 8,
};

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join(" ");
}

function messagesOf(body: Json): Message[] {
  const raw = Array.isArray(body.messages) ? body.messages as Json[] : [];
  return raw.map((m) => ({ role: String(m.role), content: textOf(m.content) }));
}

const encoder = new TextEncoder();

abstract class FakeLlm {
  readonly engine: LlmEngine;
  readonly models: string[];
  readonly defaultOutputTokens: number;
  /** Chat requests received, per model. */
  readonly chats = new Map<string, number>();
  readonly #net = new LoopbackServer((req) => this.handle(new URL(req.url).pathname, req));

  constructor(readonly name: string, options: FakeLlmOptions) {
    const { models, defaultOutputTokens, ...engine } = options;
    this.engine = new LlmEngine({ ...DEFAULTS, ...engine });
    this.models = models;
    this.defaultOutputTokens = defaultOutputTokens ?? 16;
  }

  get url(): string {
    return this.#net.url;
  }

  close(): Promise<void> {
    return this.#net.close();
  }

  protected outputTokens(limit: unknown): number {
    return typeof limit === "number" && limit > 0 ? limit : this.defaultOutputTokens;
  }

  protected abstract handle(path: string, req: Request): Response | Promise<Response>;

  /** One whole generation, for a client that does not stream. */
  protected generateWhole(model: string, body: Json, limit: unknown, signal: AbortSignal) {
    this.chats.set(model, (this.chats.get(model) ?? 0) + 1);
    return this.engine.run(model, messagesOf(body), this.outputTokens(limit), () => {}, signal);
  }

  /**
   * Streams one generation: `frame` renders each token, `end` the closing lines. The engine's work follows
   * the client: a client that leaves stops the generation and frees the slot.
   */
  protected generate(
    model: string,
    body: Json,
    limit: unknown,
    contentType: string,
    frame: (token: string) => string,
    end: (r: { promptTokens: number; completionTokens: number }) => string,
  ): Response {
    this.chats.set(model, (this.chats.get(model) ?? 0) + 1);
    const abort = new AbortController();
    const outputTokens = this.outputTokens(limit);
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const send = (text: string) => controller.enqueue(encoder.encode(text));
        this.engine.run(model, messagesOf(body), outputTokens, (t) => send(frame(t)), abort.signal)
          .then((r) => {
            send(end(r));
            controller.close();
          }, (error) => controller.error(error));
      },
      cancel: () => abort.abort(),
    });
    return new Response(stream, { headers: { "Content-Type": contentType } });
  }
}

export class FakeLlmOllama extends FakeLlm {
  static start(name: string, options: FakeLlmOptions): FakeLlmOllama {
    return new FakeLlmOllama(name, options);
  }

  protected async handle(path: string, req: Request): Promise<Response> {
    const entry = (name: string) => ({ name, model: name, size: 2_000_000_000, digest: name });
    if (path === "/api/version") return Response.json({ version: "0.33.0" });
    if (path === "/api/tags") return Response.json({ models: this.models.map(entry) });
    if (path === "/api/ps") return Response.json({ models: this.engine.loaded.map(entry) });
    if (path !== "/api/chat") return Response.json({ error: "not found" }, { status: 404 });
    const body = await req.json() as Json;
    const model = String(body.model);
    if (!this.models.includes(model)) {
      return Response.json({ error: `model '${model}' not found` }, { status: 404 });
    }
    const created_at = new Date().toISOString();
    const line = (message: string, extra: Json = {}) =>
      JSON.stringify({ model, created_at, message: { role: "assistant", content: message }, ...extra }) +
      "\n";
    const limit = (body.options as Json | undefined)?.num_predict;
    if (body.stream === false) {
      const r = await this.generateWhole(model, body, limit, req.signal);
      return Response.json({
        model,
        created_at,
        message: { role: "assistant", content: r.text },
        done: true,
        done_reason: "stop",
        total_duration: 1_000_000,
        prompt_eval_count: r.promptTokens,
        eval_count: r.completionTokens,
      });
    }
    return this.generate(
      model,
      body,
      limit,
      "application/x-ndjson",
      (t) => line(t, { done: false }),
      (r) =>
        line("", {
          done: true,
          done_reason: "stop",
          total_duration: 1_000_000,
          prompt_eval_count: r.promptTokens,
          eval_count: r.completionTokens,
        }),
    );
  }
}

export class FakeLlmVllm extends FakeLlm {
  static start(name: string, options: FakeLlmOptions): FakeLlmVllm {
    // vLLM serves the models it was started with; they are loaded from the start and never evicted.
    return new FakeLlmVllm(name, {
      ...options,
      modelMemory: options.models.length,
      preloaded: options.models,
    });
  }

  protected async handle(path: string, req: Request): Promise<Response> {
    if (path === "/v1/models") {
      return Response.json({ object: "list", data: this.models.map((id) => ({ id, object: "model" })) });
    }
    if (path === "/metrics") {
      return new Response(this.#metrics(), { headers: { "Content-Type": "text/plain" } });
    }
    if (path !== "/v1/chat/completions") return Response.json({ detail: "Not Found" }, { status: 404 });
    const body = await req.json() as Json;
    const model = String(body.model);
    if (!this.models.includes(model)) {
      return Response.json({ error: { message: `The model \`${model}\` does not exist.`, code: 404 } }, {
        status: 404,
      });
    }
    const head = { id: `chatcmpl-${this.name}`, created: Math.floor(Date.now() / 1000), model };
    const sse = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
    const chunk = (delta: Json, finish: string | null = null) =>
      sse({
        ...head,
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
    const limit = body.max_tokens ?? body.max_completion_tokens;
    if (body.stream !== true) {
      const r = await this.generateWhole(model, body, limit, req.signal);
      return Response.json({
        ...head,
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: r.text }, finish_reason: "stop" }],
        usage: {
          prompt_tokens: r.promptTokens,
          completion_tokens: r.completionTokens,
          total_tokens: r.promptTokens + r.completionTokens,
        },
      });
    }
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
    let first = true;
    return this.generate(model, body, limit, "text/event-stream", (t) => {
      const opening = first ? chunk({ role: "assistant", content: "" }) : "";
      first = false;
      return opening + chunk({ content: t });
    }, (r) => {
      const usage = {
        prompt_tokens: r.promptTokens,
        completion_tokens: r.completionTokens,
        total_tokens: r.promptTokens + r.completionTokens,
      };
      return chunk({ content: "" }, "stop") +
        (includeUsage ? sse({ ...head, object: "chat.completion.chunk", choices: [], usage }) : "") +
        "data: [DONE]\n\n";
    });
  }

  #metrics(): string {
    const e = this.engine;
    const label = `{model_name="${this.models[0]}"}`;
    return [
      `vllm:num_requests_running${label} ${e.running}`,
      `vllm:num_requests_waiting${label} ${e.waiting}`,
      `vllm:kv_cache_usage_perc${label} ${Math.min(1, e.running / e.options.slots)}`,
      `vllm:prefix_cache_queries_total${label} ${e.stats.promptTokens}`,
      `vllm:prefix_cache_hits_total${label} ${e.stats.cachedTokens}`,
      "",
    ].join("\n");
  }
}

export type FakeLlmServer = FakeLlmOllama | FakeLlmVllm;
