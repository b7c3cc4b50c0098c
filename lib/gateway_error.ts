/**
 * @module The gateway's one error type and its codes. Stages throw its subclasses (`errors.ts`); each face
 * renders them in its own wire format. Failover reads `retryable` and `countsAgainstServer`, never a status
 * text or a header.
 */

/** Stable machine-readable codes; clients may branch on them. */
export type ErrorCode =
  | "invalid_request"
  | "invalid_api_key"
  | "key_expired"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "payload_too_large"
  | "request_timeout"
  | "unsupported_media_type"
  | "rate_limited"
  | "quota_exceeded"
  | "concurrency_limit"
  | "bad_gateway"
  | "no_healthy_server"
  | "image_not_supported"
  | "store_unavailable"
  | "shutting_down"
  | "client_closed"
  | "client_stalled"
  | "body_memory_full"
  | "queue_full"
  | "queue_timeout"
  | "internal_error";

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Another server may succeed where this one failed. */
    readonly retryable = false,
    /** The failure says something about the server's health (feeds the breaker). */
    readonly countsAgainstServer = false,
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** Extra response headers (Retry-After, Allow...). */
  headers(): Record<string, string> {
    return {};
  }
}
