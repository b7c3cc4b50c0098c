/**
 * @module Accounting: what one request cost and how it ended, reported to the usage ledger exactly once. A
 * refusal before any backend work is `rejected`; a failure of the backends is `error`; a stream that broke or
 * that the client left is `partial`, billed with the backend's counts when it sent them, else with an estimate
 * of what was delivered (marked as such).
 */
import { estimateTokens } from "../chat/token_estimate.ts";
import type { ChatRequest, ChatResult } from "../chat/types.ts";
import type { GatewayError } from "../errors.ts";
import type { FaceName } from "../faces/mod.ts";
import type { StreamEnd } from "../http/stream_response.ts";
import type { KeyRecord } from "../store/records.ts";
import type { UsageRecord, UsageSink } from "../usage/types.ts";

type Tokens = Pick<UsageRecord, "promptTokens" | "completionTokens" | "tokenSource">;

const NO_TOKENS: Tokens = { promptTokens: 0, completionTokens: 0, tokenSource: "backend" };

export class RequestAccount {
  key?: KeyRecord;
  server?: string;
  #stream = false;
  #promptChars = 0;
  readonly #startedTick = performance.now();

  constructor(
    private readonly sink: UsageSink,
    private readonly face: FaceName,
    readonly startedAt: number,
    /** Sees each record too (the metrics), in the same turn it is reported. */
    private readonly observer?: { observe(record: UsageRecord): void },
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

  completed(result: ChatResult): void {
    const tokens: Tokens = {
      promptTokens: result.promptTokens,
      completionTokens: result.completionTokens,
      tokenSource: "backend",
    };
    this.#write("ok", 200, tokens, undefined, this.#elapsed());
  }

  streamEnded(end: StreamEnd): void {
    const tokens: Tokens = end.done
      ? {
        promptTokens: end.done.promptTokens,
        completionTokens: end.done.completionTokens,
        tokenSource: "backend",
      }
      : {
        promptTokens: estimateTokens(this.#promptChars),
        completionTokens: estimateTokens(end.deliveredChars),
        tokenSource: "estimate",
      };
    const code = end.done ? undefined : end.clientLeft ? "client_closed" : end.error?.code;
    const ttfb = end.firstByteAt === undefined ? undefined : end.firstByteAt - this.#startedTick;
    this.#write(end.done ? "ok" : "partial", 200, tokens, code, ttfb);
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
    const record: UsageRecord = {
      time: new Date(this.startedAt).toISOString(),
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
    this.sink.record(record);
    this.observer?.observe(record);
  }
}
