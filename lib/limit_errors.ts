/**
 * @module The refusals of a limit: the key's rate, a token quota, a concurrency limit, a model's full or
 * too-long wait queue. Each tells the client when to try again (`Retry-After`) in its headers.
 */
import { GatewayError } from "./gateway_error.ts";

/** Seconds from `now` until `at`, at least 1: what Retry-After says. */
function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/** The key's requests-per-minute limit is spent for this minute. */
export class RateLimited extends GatewayError {
  constructor(readonly limit: number, readonly resetAt: number, readonly now: number) {
    super(
      429,
      "rate_limited",
      `Rate limit of ${limit} requests per minute reached for this API key; try again in ${
        secondsUntil(resetAt, now)
      } s`,
    );
  }
  override headers(): Record<string, string> {
    return {
      "Retry-After": String(secondsUntil(this.resetAt, this.now)),
      ...rateLimitHeaders(this.limit, 0, this.resetAt),
    };
  }
}

/** The X-RateLimit-* headers; `Reset` is the end of the current minute in Unix seconds. */
export function rateLimitHeaders(limit: number, remaining: number, resetAt: number): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(limit),
    "X-RateLimit-Remaining": String(remaining),
    "X-RateLimit-Reset": String(Math.ceil(resetAt / 1000)),
  };
}

/** A daily, weekly or monthly token cap of the key or of its user is used up. */
export class QuotaExceeded extends GatewayError {
  constructor(message: string, readonly resetAt: number, readonly now: number) {
    super(429, "quota_exceeded", message);
  }
  override headers(): Record<string, string> {
    return { "Retry-After": String(secondsUntil(this.resetAt, this.now)) };
  }
}

/** The key or its user already has as many requests in progress as it may (`--max-concurrent`). */
export class ConcurrencyLimited extends GatewayError {
  constructor(owner: string, readonly limit: number) {
    super(
      429,
      "concurrency_limit",
      `${owner} already has ${limit} request(s) in progress, its limit; try again when one has ended`,
    );
  }
  override headers(): Record<string, string> {
    // When a request ends is not known; a second is about the shortest answer worth waiting for.
    return { "Retry-After": "1" };
  }
}

/** Every server for the model is busy and the gateway's wait queue for it is full: slow down. */
export class QueueFull extends GatewayError {
  constructor(model: string, readonly retryAfterS: number) {
    super(
      429,
      "queue_full",
      `Every server for model "${model}" is busy and the wait queue is full; try again`,
    );
  }
  override headers(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterS) };
  }
}

/** The request waited its longest allowed time for a free server slot and got none. */
export class QueueTimeout extends GatewayError {
  constructor(model: string, waitedMs: number, readonly retryAfterS: number) {
    super(
      503,
      "queue_timeout",
      `Every server for model "${model}" stayed busy for the ${waitedMs} ms this request waited; try again`,
    );
  }
  override headers(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterS) };
  }
}
