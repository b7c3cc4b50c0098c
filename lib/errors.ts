/**
 * @module The gateway's errors, one subclass per condition, named for it: what stages throw and faces
 * render. The base type is in `gateway_error.ts`, the refusals of limits in `limit_errors.ts`; both are
 * exported from here, so a stage imports every error from this one place.
 */
import { GatewayError } from "./gateway_error.ts";

export { type ErrorCode, GatewayError } from "./gateway_error.ts";
export {
  ConcurrencyLimited,
  QueueFull,
  QueueTimeout,
  QuotaExceeded,
  RateLimited,
  rateLimitHeaders,
} from "./limit_errors.ts";

export class InvalidRequest extends GatewayError {
  constructor(message: string) {
    super(400, "invalid_request", message);
  }
}

export class Unauthenticated extends GatewayError {
  constructor(message = "Missing or invalid API key: send it as 'Authorization: Bearer <key>'") {
    super(401, "invalid_api_key", message);
  }
}

export class KeyExpired extends GatewayError {
  constructor(expiredAt: string) {
    super(403, "key_expired", `This API key expired at ${expiredAt}`);
  }
}

export class Forbidden extends GatewayError {
  constructor(message: string) {
    super(403, "forbidden", message);
  }
}

export class NotFound extends GatewayError {
  constructor(path: string) {
    super(404, "not_found", `No such endpoint: ${path}`);
  }
}

export class MethodNotAllowed extends GatewayError {
  constructor(method: string, readonly allow: string[]) {
    super(405, "method_not_allowed", `Method ${method} is not allowed here; use ${allow.join(", ")}`);
  }
  override headers(): Record<string, string> {
    return { Allow: this.allow.join(", ") };
  }
}

/**
 * The rest of the body is never read, so the connection cannot carry another request: it is closed after the
 * answer instead of being held open while the client goes on sending.
 */
const CLOSE_CONNECTION = { Connection: "close" };

export class PayloadTooLarge extends GatewayError {
  constructor(limit: number) {
    super(413, "payload_too_large", `Request body is larger than the limit of ${limit} bytes`);
  }

  override headers(): Record<string, string> {
    return CLOSE_CONNECTION;
  }
}

/** The client took longer than allowed to send its body (slow uploads would otherwise hold a slot forever). */
export class RequestTimeout extends GatewayError {
  constructor(limitMs: number) {
    super(408, "request_timeout", `Request body was not received within ${limitMs} ms`);
  }

  override headers(): Record<string, string> {
    return CLOSE_CONNECTION;
  }
}

export class UnsupportedMediaType extends GatewayError {
  constructor(got: string) {
    // Echo only the start of what the client sent: a header can be tens of kilobytes.
    const shown = got.length > 80 ? `${got.slice(0, 80)}…` : got || "none";
    super(415, "unsupported_media_type", `Content-Type must be application/json, got ${shown}`);
  }
}

/** The store could not be read or written, so a limit could not be checked; refusing is the safe side. */
export class StoreUnavailable extends GatewayError {
  constructor(what: string, override readonly cause?: unknown, message?: string) {
    super(
      503,
      "store_unavailable",
      message ?? `The gateway cannot check the ${what} right now; try again shortly`,
    );
  }

  /** The gateway notices the store is back within a second or so. */
  override headers(): Record<string, string> {
    return { "Retry-After": "1" };
  }
}

/** The gateway is stopping and ended this request or stream at the end of its shutdown grace period. */
export class ShuttingDown extends GatewayError {
  constructor() {
    super(503, "shutting_down", "The gateway is shutting down; send the request again");
  }
}

/** The backend answered with something that is not a valid chat response. */
export class BadGateway extends GatewayError {
  constructor(message: string, retryable = true) {
    super(502, "bad_gateway", message, retryable, true);
  }
}

/** No server could serve the request; the message says why, without naming backend URLs. */
export class NoHealthyServer extends GatewayError {
  constructor(message: string) {
    super(503, "no_healthy_server", message);
  }
}

/** A backend refused an image because its model has no vision: not the server's fault, not retried. */
export class ImageNotSupported extends GatewayError {
  constructor() {
    super(503, "image_not_supported", "The model serving this key cannot take image input");
  }
}

/** A failure talking to one backend. Retryable ones send the request to the next candidate. */
export class BackendFailure extends GatewayError {
  constructor(message: string, retryable: boolean, countsAgainstServer: boolean, status = 502) {
    super(status, "bad_gateway", message, retryable, countsAgainstServer);
  }
}

/**
 * The client went away before its answer was ready: an ordinary ending, not a defect (status 499 as proxies
 * log it; the client is gone and never reads it).
 */
export class ClientClosed extends GatewayError {
  constructor() {
    super(499, "client_closed", "The client closed the connection before the answer was ready");
  }
}

/**
 * The client took none of a streamed answer's bytes for the allowed time while the answer had more: the stream
 * is cut so its server slot and backend call are not held for a reader who stopped reading.
 */
export class ClientStalled extends GatewayError {
  constructor(limitMs: number) {
    super(408, "client_stalled", `The client read nothing of the answer for ${limitMs} ms`);
  }
}

/**
 * The large request bodies already in flight fill the gateway's memory budget for them, and none ended within
 * the short wait. The body is left unread, so the connection closes after the answer.
 */
export class BodyMemoryFull extends GatewayError {
  constructor(readonly retryAfterS: number) {
    super(
      503,
      "body_memory_full",
      `The gateway is holding as many large request bodies as its memory allows; try again in ${retryAfterS} s`,
    );
  }
  override headers(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterS), ...CLOSE_CONNECTION };
  }
}

/** A defect in the gateway itself; the message never carries internals. */
export class InternalError extends GatewayError {
  constructor() {
    super(500, "internal_error", "The gateway failed to handle this request");
  }
}

/** Any thrown value as a GatewayError; a non-gateway error is a defect, logged here once. */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  console.error("gateway: unexpected failure:", error);
  return new InternalError();
}
