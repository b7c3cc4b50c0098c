/**
 * @module Errors in Anthropic's shape: `{"type":"error","error":{type, message, details:{error_code}}}`. The
 * status is the gateway's own, as on every path (the usage record keeps what the client saw); the error type
 * is Anthropic's name for that status. A 503 (no server free or healthy, the gateway stopping or short of
 * memory for bodies) is its `overloaded_error`, which Anthropic's clients retry as they retry its 529; only
 * the 503 for an image sent to a model without vision is an `invalid_request_error`.
 * `error_code` is the gateway's code (quota_exceeded, rate_limited, key_expired, …), which the SDKs show as
 * the error's code.
 */
import type { GatewayError } from "../errors.ts";

/** Anthropic's error type for each status the gateway answers with. */
function errorType(status: number, code: string): string {
  // A model without vision is no passing overload: the request has to change.
  if (code === "image_not_supported") return "invalid_request_error";
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 408:
    case 504:
      return "timeout_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
  }
  return status >= 500 ? "api_error" : "invalid_request_error";
}

/** The gateway's own wording names its Authorization header only; Anthropic's clients send x-api-key. */
const MISSING_KEY =
  "Missing or invalid API key: send it as 'x-api-key: <key>' or 'Authorization: Bearer <key>'";

export function anthropicErrorBody(error: GatewayError) {
  const message = error.code === "invalid_api_key" && error.message.startsWith("Missing")
    ? MISSING_KEY
    : error.message;
  return {
    type: "error",
    error: { type: errorType(error.status, error.code), message, details: { error_code: error.code } },
  };
}
