/**
 * @module The refusals of a limit: the key's rate, a token quota, a concurrency limit, a model's full or
 * too-long wait queue. Each names the limit and when it lifts, and tells the client when to try again
 * (`Retry-After`, seconds).
 *
 * A token quota used up until its period ends also says `x-should-retry: false`, the header the official
 * OpenAI and Anthropic clients obey before their own rules. Without it they retry every 429: the OpenAI client
 * of version 6 first sleeps the whole `Retry-After` (hours, for a daily quota), later ones retry at once
 * when it is over a minute; neither can succeed before the reset. The other refusals leave the header out: the
 * clients' default, retrying a 429 or 5xx after `Retry-After` and no other 4xx, is right for each of them.
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
      `Rate limit of ${limit} requests per minute of this API key is reached; it resets at ${
        new Date(resetAt).toISOString()
      }, try again in ${secondsUntil(resetAt, now)} s`,
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
/**
 * The rate-limit headers of an admission whose slot a later refusal gave back: one more remaining, as the
 * limiter now counts it. Headers without a rate limit are returned as they are.
 */
export function withSlotBack(headers: Record<string, string>): Record<string, string> {
  const remaining = headers["X-RateLimit-Remaining"];
  if (remaining === undefined) return headers;
  const limit = Number(headers["X-RateLimit-Limit"]);
  return { ...headers, "X-RateLimit-Remaining": String(Math.min(Number(remaining) + 1, limit)) };
}

export function rateLimitHeaders(limit: number, remaining: number, resetAt: number): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(limit),
    "X-RateLimit-Remaining": String(remaining),
    "X-RateLimit-Reset": String(Math.ceil(resetAt / 1000)),
  };
}

/**
 * A daily, weekly or monthly token cap of the key or of its user has too little left. `untilReset`: nothing
 * but the cap's period ending can help, so clients are told not to retry; otherwise requests in progress may
 * leave room as they end, and `resetAt` is soon.
 */
export class QuotaExceeded extends GatewayError {
  constructor(message: string, readonly resetAt: number, readonly now: number, readonly untilReset = true) {
    super(429, "quota_exceeded", message);
  }
  override headers(): Record<string, string> {
    const retryAfter = String(secondsUntil(this.resetAt, this.now));
    return this.untilReset
      ? { "Retry-After": retryAfter, "x-should-retry": "false" }
      : { "Retry-After": retryAfter };
  }
}

/** The key or its user already has as many requests in progress as it may (`--max-concurrent`). */
export class ConcurrencyLimited extends GatewayError {
  constructor(owner: string, readonly limit: number) {
    super(
      429,
      "concurrency_limit",
      `${owner} already has ${limit} request(s) in progress, its concurrency limit; a place frees when one ` +
        "of them ends, try again in 1 s",
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
      `Every server for model "${model}" is busy and the wait queue is full; try again in ${retryAfterS} s`,
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
      `Every server for model "${model}" stayed busy for the ${waitedMs} ms this request waited; ` +
        `try again in ${retryAfterS} s`,
    );
  }
  override headers(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterS) };
  }
}
