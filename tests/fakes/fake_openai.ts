/**
 * A scriptable fake OpenAI-compatible server (vLLM's, with llama.cpp's variants where they differ) on
 * 127.0.0.1 for tests: a real HTTP server that records what it received and answers
 * `POST /v1/chat/completions` (JSON or SSE), `GET /v1/models`, `GET /health` and `GET /metrics` (vLLM's
 * running and waiting requests, or llama.cpp's names), with the same fault modes, scripting, counters, slots
 * and time to first byte as FakeOllama, so a test can run against either. It is as strict as the real servers
 * where an adapter could get the wire format wrong: an unknown model is a 404, `stream_options` without
 * `stream` a 400, a tool result that answers no call a 400, a missing or wrong `--api-key` a 401. Like
 * FakeOllama it can stop listening and listen again on the same port.
 */
import type { FakeBackend } from "./fake_backend.ts";
import { FakeBackendBase, words } from "./fake_base.ts";
import { answerDeltas, ssePlan, type WireCall } from "./fake_openai_stream.ts";
import { hasImagePart, historyProblem, textOf } from "./openai_messages.ts";

export type { FakeMode, ReceivedChat, ScriptedReply, StreamFault } from "./fake_backend.ts";

/** vLLM up to 0.10 and llama.cpp say `reasoning_content`; newer vLLM says `reasoning`. */
export type ReasoningField = "reasoning_content" | "reasoning";

/**
 * What /metrics reports: vLLM's running and waiting requests (what the gateway reads), llama.cpp's own names
 * (its server started with --metrics; the gateway reads none of them), or nothing (404).
 */
export type MetricsDialect = "vllm" | "llama.cpp" | "none";

export interface FakeOpenAIOptions {
  /** Models the server carries; a chat naming another one gets vLLM's 404. */
  models?: string[];
  reasoningField?: ReasoningField;
  /** When set, every /v1 request must carry `Authorization: Bearer <apiKey>`, as with vLLM's --api-key. */
  apiKey?: string;
  /** Default "vllm". */
  metrics?: MetricsDialect;
}

export const CHAT_PATH = "/v1/chat/completions";

type Json = Record<string, unknown>;

/** vLLM's error body since PR#22099: nested, with an integer code. */
function errorResponse(status: number, type: string, message: string): Response {
  return Response.json({ error: { message, type, param: null, code: status } }, { status });
}

const hex = (n: number) => crypto.randomUUID().replaceAll("-", "").slice(0, n);

export class FakeOpenAI extends FakeBackendBase implements FakeBackend, AsyncDisposable {
  reasoningField: ReasoningField;
  apiKey?: string;
  metrics: MetricsDialect;
  /** Prompt and answer tokens and answers served, as the servers' counters on /metrics tell them. */
  #promptTokens = 0;
  #generatedTokens = 0;
  #finished = 0;

  private constructor(name: string, options: FakeOpenAIOptions) {
    super(name, CHAT_PATH);
    // A chat naming a model not in this list gets vLLM's 404.
    this.models = options.models ?? ["m1"];
    this.reasoningField = options.reasoningField ?? "reasoning_content";
    this.apiKey = options.apiKey;
    this.metrics = options.metrics ?? "vllm";
  }

  static start(name = "fake", options: FakeOpenAIOptions = {}): FakeOpenAI {
    return new FakeOpenAI(name, options);
  }

  protected async handle(path: string, req: Request): Promise<Response> {
    const text = await req.text();
    let body: Json = {};
    try {
      if (text) body = JSON.parse(text);
    } catch {
      this.record(path, req, body);
      return errorResponse(400, "BadRequestError", "Expecting value: line 1 column 1 (char 0)");
    }
    this.record(path, req, body);
    const probe = path === "/health" || path === "/v1/models" || path === "/metrics";
    if (probe && this.probeFault === "hang") return this.hang(req.signal);
    if (probe && this.probeFault === "error") {
      return errorResponse(500, "InternalServerError", "EngineCore encountered an issue");
    }
    // vLLM's /health and /metrics are open; its --api-key guards the /v1 routes.
    if (path === "/health") return new Response(null);
    if (path === "/metrics" && req.method === "GET" && this.metrics !== "none") {
      return new Response(this.#metricsText(), { headers: { "Content-Type": "text/plain; version=0.0.4" } });
    }
    if (this.apiKey !== undefined && req.headers.get("authorization") !== `Bearer ${this.apiKey}`) {
      return Response.json({ error: "Unauthorized" }, { status: 401 });
    }
    if (path === "/v1/models" && req.method === "GET") {
      const created = Math.floor(Date.now() / 1000);
      return Response.json({
        object: "list",
        data: this.models.map((id) => ({ id, object: "model", created, owned_by: "vllm", root: id })),
      });
    }
    if (path !== CHAT_PATH) return Response.json({ detail: "Not Found" }, { status: 404 });
    if (req.method !== "POST") return Response.json({ detail: "Method Not Allowed" }, { status: 405 });
    return this.inSlot(req.signal, () => this.#chat(body, req.signal));
  }

  /** The server's Prometheus text, as its version writes it: gauges of what runs and waits now, counters. */
  #metricsText(): string {
    const family = (
      name: string,
      type: string,
      help: string,
      labels: string,
      value: number,
    ) => [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}${labels} ${value.toFixed(1)}`];
    if (this.metrics === "llama.cpp") {
      return [
        ...family(
          "llamacpp:prompt_tokens_total",
          "counter",
          "Number of prompt tokens processed.",
          "",
          this.#promptTokens,
        ),
        ...family(
          "llamacpp:tokens_predicted_total",
          "counter",
          "Number of generation tokens processed.",
          "",
          this.#generatedTokens,
        ),
        ...family(
          "llamacpp:requests_processing",
          "gauge",
          "Number of requests processing.",
          "",
          this.running,
        ),
        ...family("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", "", this.waiting),
        "",
      ].join("\n");
    }
    // vLLM (V1 engine) labels every series with the engine and the model it serves.
    const labels = `{engine="0",model_name="${this.models[0]}"}`;
    return [
      ...family(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        labels,
        this.running,
      ),
      ...family(
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        labels,
        this.waiting,
      ),
      ...family(
        "vllm:kv_cache_usage_perc",
        "gauge",
        "KV-cache usage. 1 means 100 percent usage.",
        labels,
        this.slots ? Math.min(1, this.running / this.slots) : 0,
      ),
      ...family(
        "vllm:prompt_tokens_total",
        "counter",
        "Number of prefill tokens processed.",
        labels,
        this.#promptTokens,
      ),
      ...family(
        "vllm:generation_tokens_total",
        "counter",
        "Number of generation tokens processed.",
        labels,
        this.#generatedTokens,
      ),
      ...family(
        "vllm:request_success_total",
        "counter",
        "Count of successfully processed requests.",
        `{engine="0",finished_reason="stop",model_name="${this.models[0]}"}`,
        this.#finished,
      ),
      "",
    ].join("\n");
  }

  #chat(body: Json, signal: AbortSignal): Response | Promise<Response> {
    const messages = (Array.isArray(body.messages) ? body.messages : []) as Json[];
    const formatFree = this.formatFreeFault(signal);
    if (formatFree) return formatFree;
    switch (this.mode) {
      case "error":
        return errorResponse(
          500,
          "InternalServerError",
          "EngineCore encountered an issue, see http://10.0.0.9:8000/metrics",
        );
      case "busy":
        // llama.cpp while its model is still loading.
        return Response.json({ error: { code: 503, message: "Loading model", type: "unavailable_error" } }, {
          status: 503,
        });
      case "not-found":
        return errorResponse(404, "NotFoundError", `The model \`${body.model}\` does not exist.`);
      case "reject":
        return errorResponse(
          400,
          "BadRequestError",
          "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.",
        );
      case "text-only":
        if (hasImagePart(messages)) {
          // llama.cpp's words for a model loaded without a multimodal projector.
          return Response.json({
            error: {
              code: 400,
              message: "image input is not supported - hint: if this is unexpected, you may need to " +
                "provide the mmproj",
              type: "invalid_request_error",
            },
          }, { status: 400 });
        }
    }
    if (body.stream_options !== undefined && body.stream !== true) {
      return errorResponse(400, "BadRequestError", "Stream options can only be defined when `stream=True`.");
    }
    const invalid = historyProblem(messages);
    if (invalid) return errorResponse(400, "BadRequestError", invalid);
    if (!this.models.includes(String(body.model))) {
      return errorResponse(404, "NotFoundError", `The model \`${body.model}\` does not exist.`);
    }

    const r = this.reply(body);
    const content = r.content ?? "";
    // Like vLLM with --enable-auto-tool-choice: tool calls only when the request offered tools.
    const calls: WireCall[] = r.toolCalls && Array.isArray(body.tools) && body.tools.length
      ? r.toolCalls.map((c) => ({
        id: c.id ?? `chatcmpl-tool-${hex(16)}`,
        name: c.name,
        args: JSON.stringify(c.arguments),
      }))
      : [];
    const completionTokens = r.completionTokens ?? words(content) + words(r.thinking ?? "");
    const promptTokens = r.promptTokens ?? messages.reduce((n, m) => n + words(textOf(m.content)), 0);
    this.#promptTokens += promptTokens;
    this.#generatedTokens += completionTokens;
    this.#finished++;
    const usage = {
      prompt_tokens: promptTokens,
      total_tokens: promptTokens + completionTokens,
      completion_tokens: completionTokens,
    };
    const finish = calls.length ? "tool_calls" : r.doneReason ?? "stop";
    const head = { id: `chatcmpl-${hex(32)}`, created: Math.floor(Date.now() / 1000), model: body.model };

    if (body.stream !== true) {
      return Response.json({
        ...head,
        object: "chat.completion",
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            // vLLM answers null, not "", when the turn is only tool calls.
            content: calls.length && !content ? null : content,
            refusal: null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: c.args },
            })),
            [this.reasoningField]: r.thinking ?? null,
          },
          logprobs: null,
          finish_reason: finish,
          stop_reason: null,
        }],
        usage,
        prompt_logprobs: null,
      });
    }

    const deltas = answerDeltas({ field: this.reasoningField, text: r.thinking ?? "" }, content, calls);
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
    return this.streamed(ssePlan(head, deltas, finish, includeUsage ? usage : undefined));
  }
}
