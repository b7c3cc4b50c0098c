/**
 * A scriptable fake OpenAI-compatible server (vLLM's, with llama.cpp's variants where they differ) on
 * 127.0.0.1 for tests: a real HTTP server that records what it received and answers
 * `POST /v1/chat/completions` (JSON or SSE), `GET /v1/models` and `GET /health`, with the same fault modes,
 * scripting and counters as FakeOllama, so a test can run against either. It is as strict as the real servers
 * where an adapter could get the wire format wrong: an unknown model is a 404, `stream_options` without
 * `stream` a 400, a tool result that answers no call a 400, a missing or wrong `--api-key` a 401. Like
 * FakeOllama it can stop listening and listen again on the same port.
 */
import type { FakeBackend, FakeMode, ReceivedChat, ScriptedReply, StreamFault } from "./fake_backend.ts";
import { LoopbackServer } from "./loopback_server.ts";

export type { FakeMode, ReceivedChat, ScriptedReply, StreamFault } from "./fake_backend.ts";

/** vLLM up to 0.10 and llama.cpp say `reasoning_content`; newer vLLM says `reasoning`. */
export type ReasoningField = "reasoning_content" | "reasoning";

export interface FakeOpenAIOptions {
  /** Models the server carries; a chat naming another one gets vLLM's 404. */
  models?: string[];
  reasoningField?: ReasoningField;
  /** When set, every /v1 request must carry `Authorization: Bearer <apiKey>`, as with vLLM's --api-key. */
  apiKey?: string;
}

export const CHAT_PATH = "/v1/chat/completions";

type Json = Record<string, unknown>;

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

/** Text of a message whether its content is a string or a list of parts. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p?.type === "text" && typeof p.text === "string" ? p.text : "")).join(" ");
}

function hasImagePart(messages: Json[]): boolean {
  return messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p?.type === "image_url"));
}

/**
 * What the OpenAI API (and vLLM's request validation, for the arguments) refuses in a conversation's tool
 * history: arguments that are not a JSON string, and a tool result that answers no call of the assistant
 * turn before it. Chat templates pair results with calls by these ids.
 */
function historyProblem(messages: Json[]): string | undefined {
  let open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
      open = new Set();
      for (const [j, call] of (m.tool_calls as Json[]).entries()) {
        const fn = call.function as Json | undefined;
        if (typeof fn?.arguments !== "string") {
          return `messages[${i}].tool_calls[${j}].function.arguments: Input should be a valid string`;
        }
        if (typeof call.id !== "string" || !call.id) return `messages[${i}].tool_calls[${j}].id is required`;
        open.add(call.id);
      }
    } else if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string" || !open.delete(m.tool_call_id)) {
        return `messages[${i}]: a message with role 'tool' must respond to a preceding 'tool_calls' entry ` +
          `by its tool_call_id (got ${JSON.stringify(m.tool_call_id ?? null)})`;
      }
    }
  }
  return undefined;
}

/** vLLM's error body since PR#22099: nested, with an integer code. */
function errorResponse(status: number, type: string, message: string): Response {
  return Response.json({ error: { message, type, param: null, code: status } }, { status });
}

const hex = (n: number) => crypto.randomUUID().replaceAll("-", "").slice(0, n);

/** Splits a tool call's JSON arguments the way a tool parser streams them: in a few uneven pieces. */
function fragments(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const sse = (payload: unknown) =>
  `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;

export class FakeOpenAI implements FakeBackend, AsyncDisposable {
  mode: FakeMode = "ok";
  /** Answer for each chat; defaults to a greeting naming this server. */
  reply: (body: Json) => ScriptedReply = () => ({ content: `Hello from ${this.name}` });
  readonly received: ReceivedChat[] = [];
  /** Breaks streamed answers, when set. */
  streamFault?: StreamFault;
  /** Pause before each streamed chunk, ms. */
  chunkDelayMs = 0;
  /** Streamed answers whose connection the client closed before the end. */
  streamsCancelled = 0;
  /** Streamed answers sent to the end. */
  streamsCompleted = 0;
  /**
   * Answer chunks (reasoning, content, tool-call fragments) handed to the connection so far, over all streams.
   * The role-only opening chunk and the trailer (finish, usage, [DONE]) are framing and not counted, so
   * `streamFault.after` means the same as with FakeOllama.
   */
  chunksSent = 0;
  /** The models /v1/models lists; a chat naming another one gets vLLM's 404. */
  models: string[];
  reasoningField: ReasoningField;
  apiKey?: string;
  /** Breaks /v1/models and /health: "hang" never answers, "error" answers 500. */
  probeFault?: "hang" | "error";
  /** Requests received per path, chat and probes alike. */
  readonly hits = new Map<string, number>();
  readonly #net = new LoopbackServer((req) => this.#handle(req));

  private constructor(readonly name: string, options: FakeOpenAIOptions) {
    this.models = options.models ?? ["m1"];
    this.reasoningField = options.reasoningField ?? "reasoning_content";
    this.apiKey = options.apiKey;
  }

  static start(name = "fake", options: FakeOpenAIOptions = {}): FakeOpenAI {
    return new FakeOpenAI(name, options);
  }

  get url(): string {
    return this.#net.url;
  }

  get paused(): boolean {
    return this.#net.paused;
  }

  get chats(): ReceivedChat[] {
    return this.received.filter((r) => r.path === CHAT_PATH);
  }

  /** The body of the most recent chat request. */
  get last(): Json {
    const chats = this.chats;
    if (!chats.length) throw new Error(`${this.name} received no chat request`);
    return chats[chats.length - 1].body;
  }

  close(): Promise<void> {
    return this.#net.close();
  }

  /** Stops listening: connections are refused until `resume()`. Hanging answers are let go first. */
  pause(): Promise<void> {
    return this.#net.pause();
  }

  /** Listens again on the same port, so the URL the gateway knows works again. */
  resume(): void {
    this.#net.resume();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    const text = await req.text();
    let body: Json = {};
    try {
      if (text) body = JSON.parse(text);
    } catch {
      this.received.push({ path, headers: req.headers, body });
      return errorResponse(400, "BadRequestError", "Expecting value: line 1 column 1 (char 0)");
    }
    this.received.push({ path, headers: req.headers, body });
    const probe = path === "/health" || path === "/v1/models";
    if (probe && this.probeFault === "hang") return this.#net.hang(req.signal);
    if (probe && this.probeFault === "error") {
      return errorResponse(500, "InternalServerError", "EngineCore encountered an issue");
    }
    // vLLM's /health is open; its --api-key guards the /v1 routes.
    if (path === "/health") return new Response(null);
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
    return this.#chat(body, req.signal);
  }

  #chat(body: Json, signal: AbortSignal): Response | Promise<Response> {
    const messages = (Array.isArray(body.messages) ? body.messages : []) as Json[];
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
      case "garbage":
        return new Response("<html>oops</html>", { headers: { "Content-Type": "text/html" } });
      case "malformed":
        return Response.json({ unexpected: true });
      case "hang":
        return this.#net.hang(signal);
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
    const calls = r.toolCalls && Array.isArray(body.tools) && body.tools.length
      ? r.toolCalls.map((c) => ({
        id: c.id ?? `chatcmpl-tool-${hex(16)}`,
        name: c.name,
        args: JSON.stringify(c.arguments),
      }))
      : [];
    const completionTokens = r.completionTokens ?? words(content) + words(r.thinking ?? "");
    const promptTokens = r.promptTokens ?? messages.reduce((n, m) => n + words(textOf(m.content)), 0);
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

    const deltas: Json[] = [];
    for (const piece of (r.thinking ?? "").match(/\S+\s*/g) ?? []) {
      deltas.push({ [this.reasoningField]: piece });
    }
    for (const piece of content.match(/\S+\s*/g) ?? []) deltas.push({ content: piece });
    calls.forEach((c, index) => {
      deltas.push({
        tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }],
      });
      for (const part of fragments(c.args)) {
        deltas.push({ tool_calls: [{ index, function: { arguments: part } }] });
      }
    });
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
    return this.#stream(head, deltas, finish, includeUsage ? usage : undefined);
  }

  /**
   * Streams as vLLM does: a role-only opening chunk, the deltas one per event, the finish reason (riding on the
   * last delta when generation hit the token limit, else on an empty delta of its own, as after an EOS token),
   * the usage chunk with empty choices when asked for, and `data: [DONE]`.
   */
  #stream(head: Json, deltas: Json[], finish: string, usage?: Json): Response {
    const chunk = (delta: Json, finishReason: string | null = null) => ({
      ...head,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
    const finishOnLast = finish === "length" && deltas.length > 0;
    const fault = this.streamFault;
    const encoder = new TextEncoder();
    const send = (controller: ReadableStreamDefaultController<Uint8Array>, payload: unknown) =>
      controller.enqueue(encoder.encode(sse(payload)));
    let opened = false;
    let sent = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const delay = () => new Promise((resolve) => timer = setTimeout(resolve, this.chunkDelayMs));
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (this.chunkDelayMs) await delay();
        if (!opened) {
          opened = true;
          return send(controller, chunk({ role: "assistant", content: "" }));
        }
        if (fault && sent === fault.after) {
          if (fault.kind === "crash") return controller.error(new Error("backend crashed"));
          if (fault.kind === "garbage") send(controller, "}}not json{{");
          if (fault.kind === "error-line") {
            // vLLM reports a failure inside the stream this way, then still ends it with [DONE].
            send(controller, {
              error: {
                message: "CUDA error: out of memory",
                type: "InternalServerError",
                param: null,
                code: 500,
              },
            });
            send(controller, "[DONE]");
          }
          if (fault.kind === "stall") await this.#net.stall();
          return controller.close();
        }
        if (sent < deltas.length) {
          const last = sent === deltas.length - 1;
          send(controller, chunk(deltas[sent++], last && finishOnLast ? finish : null));
          this.chunksSent++;
          return;
        }
        if (!finishOnLast) send(controller, chunk({ content: "" }, finish));
        if (usage) send(controller, { ...head, object: "chat.completion.chunk", choices: [], usage });
        send(controller, "[DONE]");
        this.streamsCompleted++;
        controller.close();
      },
      cancel: () => {
        clearTimeout(timer);
        this.streamsCancelled++;
      },
    }, { highWaterMark: 0 });
    return new Response(stream, { headers: { "Content-Type": "text/event-stream; charset=utf-8" } });
  }
}
