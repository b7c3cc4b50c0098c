/**
 * @module Reading a request body: JSON only, bounded in size (refused from Content-Length before reading when
 * it can be), strict UTF-8.
 */
import { InvalidRequest, PayloadTooLarge, UnsupportedMediaType } from "../errors.ts";

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) throw new UnsupportedMediaType(type);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw new PayloadTooLarge(maxBytes);
  if (!request.body) throw new InvalidRequest("Cannot parse request: the body is empty");

  const reader = request.body.getReader();
  const chunks: BlobPart[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLarge(maxBytes);
    }
    chunks.push(value as Uint8Array<ArrayBuffer>);
  }
  const bytes = await new Blob(chunks).bytes();
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
