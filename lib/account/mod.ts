/**
 * @module Accounting: what one request cost and how it ended, reported to the usage ledger exactly once. A
 * refusal before any backend work is `rejected`; a failure of the backends is `error`; a stream that broke or
 * that the client left is `partial`, billed with the backend's counts when it sent them, else with an estimate
 * of what was delivered (marked as such).
 *
 * Accounting runs after the backend did its work, often after the answer was sent: nothing here may turn a
 * served request into an error. A failure to take the record or the metrics is logged and counted, never
 * thrown, and token counts are checked once more so that no invalid one reaches the ledger or a counter.
 */
import { estimateTokens } from "../chat/token_estimate.ts";
import { isoTime } from "../runtime/iso_time_format.ts";
import type { ChatRequest, ChatResult } from "../chat/types.ts";
import type { GatewayError } from "../errors.ts";
import type { FaceName } from "../faces/mod.ts";
import type { StreamEnd } from "../chat/stream_end.ts";
import type { KeyRecord } from "../store/records.ts";
import type { UsageRecord, UsageSink } from "../usage/types.ts";

type Tokens = Pick<UsageRecord, "promptTokens" | "completionTokens" | "tokenSource">;

const NO_TOKENS: Tokens = { promptTokens: 0, completionTokens: 0, tokenSource: "backend" };

const isCount = (n: number) => Number.isSafeInteger(n) && n >= 0;

/** What the policy reserved for the request, settled to the tokens billed when the request ends. */
export interface Reservation {
  settle(billed: number): void;
}

/** Sees each record too, in the same turn it is reported; told when taking a record failed. */
export interface AccountObserver {
  /** `queueMs`: how long the request waited in the queue for a server, when it got one. */
  observe(record: UsageRecord, queueMs?: number): void;
  accountingFailure?(stage: "ledger" | "metrics"): void;
}

export class RequestAccount {
  key?: KeyRecord;
  server?: string;
  /** How long the request waited for a server, once one took it. */
  queueMs?: number;
  /** Settled in the same turn as the record is taken, whichever way the request ends. */
  hold?: Reservation;
  #stream = false;
  #promptChars = 0;
  #written = false;
  readonly #startedTick = performance.now();

  constructor(
    private readonly sink: UsageSink,
    private readonly face: FaceName,
    readonly startedAt: number,
    /** The metrics. */
    private readonly observer?: AccountObserver,
  ) {}

  /** The shaped request: whether it streams, and how much prompt an estimate would bill. */
  noteRequest(request: ChatRequest): void {
    this.#stream = request.stream;
    this.#promptChars = request.messages.reduce((n, m) => n + m.content.length, 0);
  }

  failed(error: GatewayError): void {
    // A client that left was let in: it ends as an error of the request, not a refusal.
    const refused = error.status < 500 && error.code !== "client_closed";
    this.#write(refused ? "rejected" : "error", error.status, NO_TOKENS, error.code);
  }

  /** Turned away before any stage ran (a stopping gateway's 503): a refusal, whatever its status. */
  refused(error: GatewayError): void {
    this.#write("rejected", error.status, NO_TOKENS, error.code);
  }

  completed(result: ChatResult): void {
    const tokens: Tokens = {
      promptTokens: result.promptTokens,
      completionTokens: result.completionTokens,
      tokenSource: result.estimated ? "estimate" : "backend",
    };
    const chars = result.content.length + (result.thinking?.length ?? 0);
    this.#write("ok", 200, this.#checked(tokens, chars), undefined, this.#elapsed());
  }

  streamEnded(end: StreamEnd): void {
    const tokens: Tokens = end.done
      ? {
        promptTokens: end.done.promptTokens,
        completionTokens: end.done.completionTokens,
        tokenSource: end.done.estimated ? "estimate" : "backend",
      }
      : {
        promptTokens: estimateTokens(this.#promptChars),
        completionTokens: estimateTokens(end.deliveredChars),
        tokenSource: "estimate",
      };
    const code = end.done ? undefined : end.clientLeft ? "client_closed" : end.error?.code;
    const ttfb = end.firstByteAt === undefined ? undefined : end.firstByteAt - this.#startedTick;
    this.#write(end.done ? "ok" : "partial", 200, this.#checked(tokens, end.deliveredChars), code, ttfb);
  }

  /** The counts, or an estimate when one is not a count: adapters check them, so this is a defect's guard. */
  #checked(tokens: Tokens, completionChars: number): Tokens {
    if (isCount(tokens.promptTokens) && isCount(tokens.completionTokens)) return tokens;
    console.error(
      `gateway: invalid token counts reached accounting (${tokens.promptTokens}, ${tokens.completionTokens});` +
        " recorded as an estimate",
    );
    return {
      promptTokens: estimateTokens(this.#promptChars),
      completionTokens: estimateTokens(completionChars),
      tokenSource: "estimate",
    };
  }

  #elapsed(): number {
    return performance.now() - this.#startedTick;
  }

  #write(
    status: UsageRecord["status"],
    httpStatus: number,
    tokens: Tokens,
    errorCode?: string,
    ttfb?: number,
  ) {
    // One record per request, even should a later stage fail after the answer was accounted for.
    if (this.#written) return;
    this.#written = true;
    const record: UsageRecord = {
      time: isoTime(this.startedAt),
      format: this.face,
      stream: this.#stream,
      status,
      httpStatus,
      ...tokens,
      latencyMs: Math.round(this.#elapsed() * 1000) / 1000,
    };
    if (this.key) {
      record.keyId = this.key.id;
      record.model = this.key.model;
      if (this.key.user !== undefined) record.user = this.key.user;
    }
    if (this.server !== undefined) record.server = this.server;
    if (errorCode !== undefined) record.errorCode = errorCode;
    if (ttfb !== undefined) record.ttfbMs = Math.round(ttfb * 1000) / 1000;
    this.#take("ledger", () => this.sink.record(record));
    // After the record: the holdings let go of billed tokens once the ledger wrote what was taken before.
    if (this.hold) this.#settle(this.hold, tokens.promptTokens + tokens.completionTokens);
    if (this.observer) this.#take("metrics", () => this.observer!.observe(record, this.queueMs));
  }

  #settle(hold: Reservation, billed: number): void {
    try {
      hold.settle(billed);
    } catch (error) {
      // The reservation's lease ends it in the store; the answer stands.
      console.error("gateway: settling the quota reservation failed:", error);
    }
  }

  #take(stage: "ledger" | "metrics", take: () => void): void {
    try {
      take();
    } catch (error) {
      console.error(`gateway: the usage ${stage === "ledger" ? "record" : "metrics"} failed:`, error);
      try {
        this.observer?.accountingFailure?.(stage);
      } catch {
        // Counting the failure failed too; the log line above is what is left.
      }
    }
  }
}
