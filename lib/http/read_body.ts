/**
 * @module Reading a request body: JSON only, bounded in size (refused from Content-Length before reading when
 * it can be), in time (a slow upload cannot hold the request open) and, where the caller asks, in the memory
 * that large bodies in flight take together (lib/http/body_budget.ts), strict UTF-8.
 */
import {
  GatewayError,
  InvalidRequest,
  PayloadTooLarge,
  RequestTimeout,
  UnsupportedMediaType,
} from "../errors.ts";
import { clearDeadline, deadline } from "../runtime/deadlines.ts";
import { BodyBudget, bodyMemoryFor, COUNTED_FROM } from "./body_budget.ts";
import { concat } from "../runtime/bytes.ts";

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

/** The config's body limits; the time counts from the first read. */
export interface BodyLimits {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
}
/** The limits and the memory budget of large bodies: one budget per configuration object, so per gateway. */
export interface CountedBodyLimits extends BodyLimits {
  bodyMemoryBytes: number;
}

const budgets = new WeakMap<CountedBodyLimits, BodyBudget>();

function budgetOf(limits: CountedBodyLimits): BodyBudget {
  let budget = budgets.get(limits);
  if (!budget) budgets.set(limits, budget = new BodyBudget(limits.bodyMemoryBytes));
  return budget;
}

/** What is counted for each request whose large body was read and not yet released. */
const counted = new Map<Request, { budget: BodyBudget; amount: number }>();

/** Counts `request`'s body at `bytes` (more than before), waiting while the budget is full. */
async function countBody(request: Request, limits: CountedBodyLimits, bytes: number): Promise<void> {
  const budget = budgetOf(limits);
  const entry = counted.get(request);
  const before = entry?.amount ?? 0;
  const amount = Math.min(bodyMemoryFor(bytes), budget.limit) - before;
  if (amount <= 0) return;
  const waiting = budget.take(amount);
  if (waiting) await waiting;
  if (entry) entry.amount += amount;
  else counted.set(request, { budget, amount });
}

/**
 * Ends the counting of `request`'s body, read with `readJsonBody(…, true)`: once the request is answered, or
 * its stream has begun, what its body made is garbage or the one parsed request. Cheap for an uncounted body.
 */
export function releaseBody(request: Request): void {
  if (counted.size === 0) return;
  const entry = counted.get(request);
  if (!entry) return;
  counted.delete(request);
  entry.budget.give(entry.amount);
}

const EMPTY = "Cannot parse request: the body is empty";

/** Stateless between whole-buffer calls, so one of each serves every request. */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });
const UTF8 = new TextDecoder();

/**
 * The body as text, refusing bytes that are not UTF-8. The runtime decodes UTF-8 faster when it may replace
 * bad bytes than when it must refuse them, so a body is decoded that way, and again strictly only when the
 * text holds U+FFFD: a replaced byte, or the character itself sent as such.
 */
function decodeStrict(bytes: Uint8Array): string {
  const text = UTF8.decode(bytes);
  return text.includes("\uFFFD") ? STRICT_UTF8.decode(bytes) : text;
}

/** Ollama reads any body as JSON (its docs' curl lines send no Content-Type), so its own paths do too. */
export function readAsJson(request: Request): Request {
  if (/json/i.test(request.headers.get("content-type") ?? "")) return request;
  const headers = new Headers(request.headers);
  headers.set("content-type", "application/json");
  return new Request(request, { headers });
}

/**
 * The body, parsed. With `count`, a large body counts against the budget of `limits` from before it is read
 * (from its declared length, else as it arrives) until `releaseBody(request)`; while the budget is full the
 * read waits, then is refused with 503 `body_memory_full`.
 */
export function readJsonBody(request: Request, limits: BodyLimits): Promise<unknown>;
export function readJsonBody(request: Request, limits: CountedBodyLimits, count: true): Promise<unknown>;
export async function readJsonBody(request: Request, limits: BodyLimits, count = false): Promise<unknown> {
  const headers = request.headers;
  const type = headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) throw new UnsupportedMediaType(type);
  const length = headers.get("content-length");
  const declared = length === null ? NaN : Number(length);
  if (declared > limits.maxBodyBytes) throw new PayloadTooLarge(limits.maxBodyBytes);

  // With a declared length the HTTP engine bounds the size, and the runtime reads the body in one call. That
  // call reads the connection directly only while `request.body` was never touched: asking for it builds a
  // stream the body is then read through, which costs a short request some microseconds and kilobytes.
  try {
    let bytes: Uint8Array;
    if (declared >= 0) {
      if (declared === 0) throw new InvalidRequest(EMPTY);
      if (count && declared >= COUNTED_FROM) await countBody(request, limits as CountedBodyLimits, declared);
      bytes = await readDeclared(request, limits);
    } else {
      const body = request.body;
      if (!body) throw new InvalidRequest(EMPTY);
      bytes = await readBounded(
        body,
        limits,
        count ? growing(request, limits as CountedBodyLimits) : undefined,
      );
    }
    return parse(bytes);
  } catch (error) {
    if (count) releaseBody(request);
    throw error;
  }
}

/**
 * A body without a declared length is counted as it grows, at twice what was counted each time it passes that,
 * so a body is counted a few times rather than at every chunk.
 */
function growing(request: Request, limits: CountedBodyLimits): (size: number) => Promise<void> | undefined {
  let upTo = COUNTED_FROM;
  return (size) => {
    if (size < upTo) return;
    upTo = Math.min(Math.max(2 * upTo, size), limits.maxBodyBytes);
    return countBody(request, limits, upTo);
  };
}

function parse(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = decodeStrict(bytes);
  } catch {
    throw new InvalidRequest("Cannot parse request: the body is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!text.trim()) throw new InvalidRequest(EMPTY);
    throw new InvalidRequest(`Cannot parse request: invalid JSON (${(error as Error).message})`);
  }
}

/**
 * A body of declared length, read whole; past the time bound the request is answered 408 (which closes the
 * connection, ending the read that was left pending).
 */
async function readDeclared(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  // Settled by the read or the deadline, whichever comes first: a race of the two would cost a promise more.
  const { promise, resolve, reject } = Promise.withResolvers<Uint8Array>();
  const upload = deadline(limits.bodyTimeoutMs, () => reject(new RequestTimeout(limits.bodyTimeoutMs)));
  request.bytes().then(resolve, reject);
  try {
    return await promise;
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw new InvalidRequest("Cannot parse request: the body ended before it was complete");
  } finally {
    clearDeadline(upload);
  }
}

/**
 * Stops reading, and cancels the upload, as soon as the body is too large or too slow. `grown` hears of each
 * size the body reaches, and reading waits for what it returns.
 */
export async function readBounded(
  body: ReadableStream<Uint8Array>,
  limits: BodyLimits,
  grown?: (size: number) => Promise<void> | undefined,
): Promise<Uint8Array> {
  const reader = body.getReader();
  let expired = false;
  // Cancelling ends the pending read (as if the body were complete), so the flag tells the two apart.
  const upload = deadline(limits.bodyTimeoutMs, () => {
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
      const waiting = grown?.(size);
      if (waiting) await waiting;
    }
  } catch (error) {
    if (error instanceof PayloadTooLarge) discardRest(reader);
    else await reader.cancel().catch(() => {});
    // A read that fails is a client that hung up mid-upload: its fault, not the gateway's.
    if (error instanceof GatewayError) throw error;
    if (expired) throw new RequestTimeout(limits.bodyTimeoutMs);
    throw new InvalidRequest("Cannot parse request: the body ended before it was complete");
  } finally {
    clearDeadline(upload);
  }
  return concat(chunks, size);
}

/**
 * What a body refused as too large may still send, read and thrown away for a while before the upload is
 * cancelled. Cancelled at once, the client's last bytes arrive at a connection that no longer reads, which
 * is then closed with data unread: the kernel resets it, and the reset throws away the 413 waiting in the
 * client's receive buffer. Most bodies refused are a little over the limit, and their rest is soon read.
 */
const DISCARD = { ms: 2_000, bytes: 64 * 1024 * 1024 };

function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  const until = performance.now() + DISCARD.ms;
  const timer = setTimeout(() => reader.cancel().catch(() => {}), DISCARD.ms);
  Deno.unrefTimer(timer);
  (async () => {
    let left = DISCARD.bytes;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      left -= value.byteLength;
      if (left < 0 || performance.now() > until) {
        await reader.cancel();
        break;
      }
    }
  })().catch(() => {}).finally(() => clearTimeout(timer));
}
