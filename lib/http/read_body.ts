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

/** Stops reading, and cancels the upload, as soon as the body is too large or too slow. */
async function readBounded(body: ReadableStream<Uint8Array>, limits: BodyLimits): Promise<Uint8Array> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RequestTimeout(limits.bodyTimeoutMs)), limits.bodyTimeoutMs);
  });
  const chunks: BlobPart[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), expired]);
      if (done) break;
      size += value.byteLength;
      if (size > limits.maxBodyBytes) throw new PayloadTooLarge(limits.maxBodyBytes);
      chunks.push(value as Uint8Array<ArrayBuffer>);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    // A read that fails is a client that hung up mid-upload: its fault, not the gateway's.
    if (error instanceof GatewayError) throw error;
    throw new InvalidRequest("Cannot parse request: the body ended before it was complete");
  } finally {
    clearTimeout(timer);
  }
  return await new Blob(chunks).bytes();
}
