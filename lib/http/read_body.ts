/**
 * @module Reading a request body: JSON only, bounded in size (refused from Content-Length before reading when
 * it can be) and in time (a slow upload cannot hold the request open), strict UTF-8.
 */
import type { Config } from "../config.ts";
import {
  GatewayError,
  InvalidRequest,
  PayloadTooLarge,
  RequestTimeout,
  UnsupportedMediaType,
} from "../errors.ts";

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

/** The config's body limits; the time counts from the first read. */
export type BodyLimits = Pick<Config, "maxBodyBytes" | "bodyTimeoutMs">;

export async function readJsonBody(request: Request, limits: BodyLimits): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) throw new UnsupportedMediaType(type);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limits.maxBodyBytes) throw new PayloadTooLarge(limits.maxBodyBytes);
  if (!request.body) throw new InvalidRequest("Cannot parse request: the body is empty");

  const bytes = await readBounded(request.body, limits);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new InvalidRequest("Cannot parse request: the body is not valid UTF-8");
  }
  if (!text.trim()) throw new InvalidRequest("Cannot parse request: the body is empty");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidRequest(`Cannot parse request: invalid JSON (${(error as Error).message})`);
  }
}

/**
 * Uploads still being read, with their deadlines. One coarse sweep serves them all instead of a timer per
 * request: a timer costs every request some microseconds, and a body timeout does not need millisecond
 * precision (it fires at most `SWEEP_MS` late).
 */
const SWEEP_MS = 100;
const uploads = new Map<ReadableStreamDefaultReader<Uint8Array>, { deadline: number; expire: () => void }>();
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = performance.now();
  for (const [reader, upload] of uploads) {
    if (upload.deadline <= now) {
      uploads.delete(reader);
      upload.expire();
    }
  }
  if (uploads.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

function watch(reader: ReadableStreamDefaultReader<Uint8Array>, timeoutMs: number, expire: () => void): void {
  uploads.set(reader, { deadline: performance.now() + timeoutMs, expire });
  if (sweeper === undefined) {
    const timer = sweeper = setInterval(sweep, Math.min(SWEEP_MS, timeoutMs));
    Deno.unrefTimer(timer as unknown as number);
  }
}

/** Stops reading, and cancels the upload, as soon as the body is too large or too slow. */
export async function readBounded(body: ReadableStream<Uint8Array>, limits: BodyLimits): Promise<Uint8Array> {
  const reader = body.getReader();
  let expired = false;
  // Cancelling ends the pending read (as if the body were complete), so the flag tells the two apart.
  watch(reader, limits.bodyTimeoutMs, () => {
    expired = true;
    reader.cancel().catch(() => {});
  });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (expired) throw new RequestTimeout(limits.bodyTimeoutMs);
      if (done) break;
      size += value.byteLength;
      if (size > limits.maxBodyBytes) throw new PayloadTooLarge(limits.maxBodyBytes);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    // A read that fails is a client that hung up mid-upload: its fault, not the gateway's.
    if (error instanceof GatewayError) throw error;
    if (expired) throw new RequestTimeout(limits.bodyTimeoutMs);
    throw new InvalidRequest("Cannot parse request: the body ended before it was complete");
  } finally {
    uploads.delete(reader);
  }
  return concat(chunks, size);
}

/** Most bodies arrive in one chunk, which is returned as it is. */
function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
