/**
 * @module Image inputs. Only inline data is ever accepted: a remote URL is dropped here, before the request
 * has any form that could carry it further, so nothing downstream can be made to fetch it (SSRF).
 */
import { InvalidRequest } from "../errors.ts";

/** The scheme and its parameters are case-insensitive (RFC 2397): `DATA:IMAGE/PNG;BASE64,…` is an image too. */
const DATA_URI = /^data:([^,;]*)((?:;[^,;]*)*),(.*)$/is;
const isDataUri = (value: string) => /^data:/i.test(value);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Normalises base64 (URL-safe alphabet, missing padding, whitespace) to what Ollama's decoder takes. */
function normaliseBase64(data: string, field: string): string {
  let b64 = data.replace(/\s+/g, "").replaceAll("-", "+").replaceAll("_", "/");
  if (b64.length % 4 === 1 || !BASE64.test(b64.replace(/=+$/, ""))) {
    throw new InvalidRequest(`Cannot parse request: "${field}" is not valid base64 image data`);
  }
  b64 = b64.replace(/=+$/, "");
  if (b64.length === 0) throw new InvalidRequest(`Cannot parse request: "${field}" is an empty image`);
  return b64 + "=".repeat((4 - (b64.length % 4)) % 4);
}

function fromDataUri(uri: string, field: string): string {
  const match = DATA_URI.exec(uri);
  if (!match) throw new InvalidRequest(`Cannot parse request: "${field}" is not a valid data: URI`);
  const [, mediaType, params, data] = match;
  if (mediaType && !/^image\/[a-z0-9.+-]+$/i.test(mediaType)) {
    // The media type is the client's own text, as long as the body allows: echo only its start.
    const shown = mediaType.length > 80 ? `${mediaType.slice(0, 80)}…` : mediaType;
    throw new InvalidRequest(`Cannot parse request: "${field}" must be an image, got ${shown}`);
  }
  if (!params.toLowerCase().split(";").includes("base64")) {
    throw new InvalidRequest(
      `Cannot parse request: "${field}" must be base64-encoded (data:<type>;base64,…)`,
    );
  }
  return normaliseBase64(data, field);
}

/** An `image_url` part: a data: URI becomes bare base64; any other URL is dropped (returns undefined). */
export function imageFromUrl(url: string, field: string): string | undefined {
  return isDataUri(url) ? fromDataUri(url, field) : undefined;
}

/** A format-B `images` entry: bare base64, or a data: URI. */
export function imageFromInline(value: string, field: string): string {
  return isDataUri(value) ? fromDataUri(value, field) : normaliseBase64(value, field);
}
