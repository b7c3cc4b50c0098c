/**
 * What a refusal must look like on each public chat path, so every hostile-input test holds the gateway to
 * the same promise: a 4xx, JSON, in the error shape of the path's own format (spec §7), with a code that
 * agrees with the status. Also the check that a gateway still serves after it was attacked.
 */
import assert from "node:assert/strict";
import { type TestGateway, USER_HELLO } from "../harness.ts";

/** Format A (OpenAI's), format B (Ollama's), or Anthropic's Messages API. */
export type FaceLetter = "A" | "B" | "anthropic";

export const CHAT_PATHS: readonly { path: string; face: FaceLetter }[] = [
  { path: "/v1/chat/completions", face: "A" },
  { path: "/api/v1/chat/completions", face: "A" },
  { path: "/v1/chat/completions.php", face: "A" },
  { path: "/api/v1/chat/completions.php", face: "A" },
  { path: "/v1/chat.php", face: "B" },
  { path: "/api/v1/chat.php", face: "B" },
];

/** The code each client-error status must carry; a status outside this table is not a refusal of input. */
export const CODE_FOR_STATUS: Readonly<Record<number, string>> = {
  400: "invalid_request",
  408: "request_timeout",
  413: "payload_too_large",
  415: "unsupported_media_type",
};

export interface FaceError {
  status: number;
  code: string;
  message: string;
}

/** Anthropic's error type for each client-error status (lib/faces/anthropic_errors.ts). */
const ANTHROPIC_TYPE_FOR_STATUS: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  408: "timeout_error",
  413: "request_too_large",
  415: "invalid_request_error",
};

/** Anthropic's shape: `{"type":"error","error":{type, message, details:{error_code}}}`. */
function assertAnthropicShape(body: object, status: number, where: string): FaceError {
  assert.deepEqual(Object.keys(body).sort(), ["error", "type"], `${where}: body keys`);
  const { type, error } = body as { type: unknown; error: Record<string, unknown> };
  assert.equal(type, "error", where);
  assert.deepEqual(Object.keys(error).sort(), ["details", "message", "type"], where);
  assert.equal(error.type, ANTHROPIC_TYPE_FOR_STATUS[status], `${where}: type for status ${status}`);
  assert.ok(typeof error.message === "string" && error.message.length > 0, `${where}: empty message`);
  const code = (error.details as { error_code?: unknown }).error_code;
  assert.equal(code, CODE_FOR_STATUS[status], `${where}: code for status ${status}`);
  return { status, code: code as string, message: error.message as string };
}

/** Checks a parsed error body against the face's shape; `where` names the case in assertion messages. */
export function assertErrorShape(body: unknown, status: number, face: FaceLetter, where: string): FaceError {
  assert.ok(status >= 400 && status < 500, `${where}: status ${status} is not a client error`);
  assert.ok(typeof body === "object" && body !== null, `${where}: body is not a JSON object`);
  if (face === "anthropic") return assertAnthropicShape(body, status, where);
  assert.deepEqual(Object.keys(body), ["error"], `${where}: body has other keys than "error"`);
  const error = (body as { error: Record<string, unknown> }).error;
  if (face === "A") {
    assert.deepEqual(Object.keys(error).sort(), ["code", "message", "param", "type"], where);
    assert.equal(error.param, null, where);
    // OpenAI's SDKs branch on this type for a request they sent wrong.
    assert.equal(error.type, "invalid_request_error", where);
  } else {
    assert.deepEqual(Object.keys(error).sort(), ["code", "message", "type"], where);
    assert.equal(error.type, "proxy_error", where);
  }
  assert.ok(typeof error.message === "string" && error.message.length > 0, `${where}: empty message`);
  assert.equal(error.code, CODE_FOR_STATUS[status], `${where}: code for status ${status}`);
  return { status, code: error.code as string, message: error.message as string };
}

/** Reads a response that must be a refusal in the face's format. */
export async function readFaceError(res: Response, face: FaceLetter, where: string): Promise<FaceError> {
  const text = await res.text();
  assert.match(
    res.headers.get("content-type") ?? "",
    /^application\/json/,
    `${where}: ${text.slice(0, 200)}`,
  );
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    assert.fail(`${where}: ${res.status} body is not JSON: ${text.slice(0, 200)}`);
  }
  return assertErrorShape(body, res.status, face, where);
}

/** Every public path still answers a valid chat, each in its own format. */
export async function assertServesEveryPath(gw: TestGateway, key: string): Promise<void> {
  for (const { path, face } of CHAT_PATHS) {
    const res = await gw.post(path, key, { model: "any", messages: USER_HELLO });
    assert.equal(res.status, 200, `${path} after the attack: ${res.status}`);
    const body = await res.json();
    if (face === "A") assert.equal(body.object, "chat.completion", path);
    else assert.equal(body.done, true, path);
  }
}

/** No request the gateway answered with a 5xx: each one leaves a usage record with its status. */
export function assertNoServerErrors(gw: TestGateway): void {
  const failures = gw.usage.filter((u) => u.httpStatus >= 500);
  assert.deepEqual(failures.map((u) => `${u.httpStatus} ${u.errorCode}`), [], "server errors were recorded");
}
