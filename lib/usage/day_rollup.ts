/**
 * @module One day's usage, rolled up: records that agree on everything a report groups by (key, user, model,
 * server, format, streaming, outcome) become one record of that day with the sum of their tokens, how many
 * requests it stands for (`count`) and their mean latency. Every total a report makes of rows (requests,
 * tokens, per key, user, model, server, outcome, day) is the same before and after; what is lost is each
 * request's own time of day, latency and time to first byte.
 */
import type { UsageRecord } from "./types.ts";

export const DAY_MS = 86_400_000;

export const dayOf = (timeMs: number) => Math.floor(timeMs / DAY_MS) * DAY_MS;

/** What a rolled-up record keeps apart, in the order its fields are written. */
const GROUP_FIELDS = [
  "keyId",
  "user",
  "model",
  "server",
  "format",
  "stream",
  "status",
  "httpStatus",
  "errorCode",
  "tokenSource",
] as const;

type Fields = Record<string, unknown>;

/**
 * The group's id: its fields joined on a character none of them holds (ids, names, codes, numbers); an absent
 * field joins as "", which no present one is.
 */
const groupOf = (rec: UsageRecord) => GROUP_FIELDS.map((f) => rec[f]).join("\u0000");

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

/** The records of one day being rolled up, by group. */
export class DayRollup {
  readonly #groups = new Map<string, UsageRecord>();

  constructor(readonly dayMs: number) {}

  get size(): number {
    return this.#groups.size;
  }

  /** Adds a record (itself possibly rolled up or folded: its `count` says how many requests it is). */
  add(rec: UsageRecord): void {
    const id = groupOf(rec);
    const n = rec.count ?? 1;
    const into = this.#groups.get(id);
    if (!into) {
      const fresh: Fields = { time: new Date(this.dayMs).toISOString() };
      for (const field of GROUP_FIELDS) if (rec[field] !== undefined) fresh[field] = rec[field];
      Object.assign(fresh, {
        promptTokens: rec.promptTokens,
        completionTokens: rec.completionTokens,
        latencyMs: rec.latencyMs,
      });
      if (n > 1) fresh.count = n;
      this.#groups.set(id, fresh as unknown as UsageRecord);
      return;
    }
    const had = into.count ?? 1;
    into.promptTokens += rec.promptTokens;
    into.completionTokens += rec.completionTokens;
    into.latencyMs = round3((into.latencyMs * had + rec.latencyMs * n) / (had + n));
    into.count = had + n;
  }

  /** The day's rolled-up records, in a stable order (by group). */
  records(): UsageRecord[] {
    return [...this.#groups.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([, rec]) => rec);
  }
}
