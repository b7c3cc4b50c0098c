/**
 * @module One POST to a backend, with timeouts and the classification of every way it can fail: the part of
 * failover that needs to know HTTP. Backend URLs stay out of the messages, which may reach clients.
 */
import { BackendFailure, BadGateway, GatewayError, ImageNotSupported, InvalidRequest } from "../errors.ts";
import { Buffer } from "node:buffer";
import type { CallContext } from "./adapter.ts";
import { clearDeadline, deadline } from "../runtime/deadlines.ts";
import { BodyTooLarge, type ChunkReader, post, type UpstreamAnswer } from "./upstream.ts";
import { CallAbort } from "./call_abort.ts";

/** Error bodies are read only this far: enough for a message, bounded against a hostile backend. */
const ERROR_BODY_LIMIT = 8192;
const JSON_ONLY = { "Content-Type": "application/json" };
const IMAGE_TROUBLE = /image|vision|multimodal|projector/i;

export interface PostOptions {
  headers?: Record<string, string>;
  /** The request carried images, so an image complaint means a text-only model (503, not the server's fault). */
  hasImages: boolean;
}

/**
 * What of a backend's message names its inside: URLs, addresses with or without a port (`10.0.0.5:11434`,
 * `[fd00::5]:8000`, `gpu-box.internal:11434`), and file paths (model blobs, a runner's binary). A port needs two
 * digits or more, so a model tag such as `llama3:8b` or `gemma:2` stays.
 */
const INSIDE: [RegExp, string][] = [
  [/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<address>"],
  [/\[[0-9a-f:.]+\](?::\d+)?/gi, "<address>"],
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b/g, "<address>"],
  [/\b[a-z0-9][a-z0-9.-]*:\d{2,5}\b/gi, "<address>"],
  [/\b[a-z]:\\[^\s"'<>|]+/gi, "<path>"],
  [/(^|[\s"'(=,:])(?:~|\.{1,2})?(?:\/[\w.@+-]+){2,}\/?/g, "$1<path>"],
];

/** Backend messages can name internal addresses and files; clients see them without those. */
function scrub(message: string): string {
  let out = message;
  for (const [pattern, replacement] of INSIDE) out = out.replace(pattern, replacement);
  return out.slice(0, 300);
}

export function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text);
    const err = body?.error ?? body;
    if (typeof err === "string") return scrub(err);
    if (typeof err?.message === "string") return scrub(err.message);
  } catch {
    // Not JSON: the text itself is the message.
  }
  return scrub(text.trim()) || "no message";
}

function classify(status: number, message: string, opts: PostOptions): GatewayError {
  if (opts.hasImages && IMAGE_TROUBLE.test(message)) return new ImageNotSupported();
  // The gateway's own credentials for that server (an OpenAI-compatible server's --api-key, or a proxy in
  // front of it): a configuration fault of the server, never the client's.
  if (status === 401 || status === 403) {
    return new BackendFailure(`model server refused the gateway's credentials (${status})`, true, true);
  }
  if (status === 404) {
    return new BackendFailure(`model server does not have the model (${message})`, true, false);
  }
  if (status === 408 || status === 429) {
    return new BackendFailure(`model server is busy (${status})`, true, false);
  }
  if (status >= 500) return new BackendFailure(`model server failed with status ${status}`, true, true);
  return new InvalidRequest(`The model server rejected the request: ${message}`);
}

async function readCapped(body: ChunkReader, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await body.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // What arrived before the break is the message.
  }
  body.cancel();
  return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
}

/** An open backend response (2xx) and the means to stop it. */
export interface OpenResponse {
  answer: UpstreamAnswer;
  abort: CallAbort;
  /** Detaches from the client's signal and clears timers; call when done with the response. */
  release(): void;
}

/** Sends the request and waits for a 2xx response's headers; any failure before that is classified. */
export async function openResponse(url: string, body: unknown, ctx: CallContext, opts: PostOptions) {
  const abort = new CallAbort();
  const onClientAbort = (reason: unknown) => abort.abort(reason);
  ctx.cut?.listen(onClientAbort);
  const timer = deadline(
    ctx.firstByteTimeoutMs,
    () => abort.abort(new DOMException("headers", "TimeoutError")),
  );
  const release = () => {
    clearDeadline(timer);
    ctx.cut?.forget(onClientAbort);
  };
  try {
    const reached = ctx.reach?.check(url, ctx.connectTimeoutMs, abort);
    if (reached) await reached;
    const answer = await post(
      url,
      opts.headers ? { ...JSON_ONLY, ...opts.headers } : JSON_ONLY,
      JSON.stringify(body),
      abort,
    );
    clearDeadline(timer);
    ctx.reach?.answered(url);
    if (answer.status < 200 || answer.status > 299) {
      throw classify(answer.status, errorMessage(await readCapped(answer.chunks(), ERROR_BODY_LIMIT)), opts);
    }
    return { answer, abort, release } satisfies OpenResponse;
  } catch (error) {
    release();
    if (error instanceof GatewayError || ctx.cut?.aborted) throw error;
    if (abort.aborted) {
      throw new BackendFailure("model server timed out before answering", true, true, 504);
    }
    throw new BackendFailure("could not reach the model server", true, true);
  }
}

/**
 * A whole answer as text, at most `limit` bytes: a declared length is checked before anything is read, and
 * the reading is given up as soon as the bytes pass the limit; either way with `BodyTooLarge`. The answer's
 * own promise is returned, not one wrapping it: each level of promises costs the request a turn.
 */
function readAnswer(answer: UpstreamAnswer, limit: number): Promise<string> {
  const declared = answer.header("content-length");
  if (declared !== undefined && Number(declared) > limit) throw new BodyTooLarge();
  return answer.text(limit);
}

/** A non-streamed call: the whole answer as parsed JSON, within the response timeout. */
export async function postJson(
  url: string,
  body: unknown,
  ctx: CallContext,
  opts: PostOptions,
): Promise<unknown> {
  const { answer, abort, release } = await openResponse(url, body, ctx, opts);
  const timer = deadline(
    ctx.responseTimeoutMs,
    () => abort.abort(new DOMException("body", "TimeoutError")),
  );
  try {
    const text = await readAnswer(answer, ctx.maxAnswerBytes);
    try {
      return JSON.parse(text);
    } catch {
      throw new BadGateway("The model server answered with something that is not JSON");
    }
  } catch (error) {
    if (error instanceof BodyTooLarge) {
      // Unread or half read, the body is not wanted: its connection is closed.
      abort.abort();
      throw new BadGateway(`The model server's answer is larger than ${ctx.maxAnswerBytes} bytes`);
    }
    if (error instanceof GatewayError || ctx.cut?.aborted) throw error;
    if (abort.aborted) {
      throw new BackendFailure("model server timed out during its answer", true, true, 504);
    }
    throw new BackendFailure("the model server's answer broke off", true, true);
  } finally {
    clearDeadline(timer);
    release();
  }
}
