/**
 * @module The usage ledger's record: one per request, accepted or rejected.
 */
import type { FaceName } from "../faces/face.ts";

export type UsageStatus = "ok" | "partial" | "error" | "rejected";

/** Where the token counts came from: the backend's own counts, or an estimate from the delivered text. */
export type TokenSource = "backend" | "estimate";

export interface UsageRecord {
  /** ISO 8601 time the request arrived. */
  time: string;
  /** The key's id; absent when no valid key was presented. */
  keyId?: string;
  /** The key's owning user, if any. */
  user?: string;
  /** The key's model (absent when no key). */
  model?: string;
  /** The server that answered (name), if one was reached. */
  server?: string;
  format: FaceName;
  stream: boolean;
  status: UsageStatus;
  /** HTTP status the client saw (200 for streams, even those that ended early). */
  httpStatus: number;
  /** Error code for error/rejected/partial outcomes. */
  errorCode?: string;
  promptTokens: number;
  completionTokens: number;
  tokenSource: TokenSource;
  /** Whole request, ms. */
  latencyMs: number;
  /** Time to the first byte of the response body, ms (absent if none was sent). */
  ttfbMs?: number;
  /** How many refusals of the same key and reason this row stands for, when it is more than one (see
   * `refusal_fold.ts`); absent on every other row. */
  count?: number;
}

/** Where finished requests are reported; the ledger queues them so reporting never waits on storage. */
export interface UsageSink {
  record(record: UsageRecord): void;
}

/**
 * How far a ledger got, for the quota decisions: a record taken is numbered `recorded` (as read right after
 * taking it), and each commit stores, at `markKey`, how many records the counters hold, so a snapshot that
 * reads the mark with the counters knows which of this ledger's records it counts.
 */
export interface LedgerProgress {
  readonly recorded: number;
  readonly markKey: Deno.KvKey;
  /** Resolves once every record taken so far is in the counters. */
  flush(): Promise<void>;
  /**
   * Resolves, as `flush`, once every record taken so far is in the counters, but in the ledger's own time:
   * the batch being filled is not written early for it.
   */
  whenWritten(): Promise<void>;
}
