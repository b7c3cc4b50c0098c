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
 * field joins as "", which no present one is. Spelled out rather than mapped and joined: a pass computes it
 * for every record it rolls up.
 */
export const groupOf = (rec: UsageRecord): string =>
  `${rec.keyId ?? ""}\u0000${rec.user ?? ""}\u0000${rec.model ?? ""}\u0000${rec.server ?? ""}\u0000${
    rec.format ?? ""
  }\u0000${rec.stream ?? ""}\u0000${rec.status ?? ""}\u0000${rec.httpStatus ?? ""}\u0000${
    rec.errorCode ?? ""
  }\u0000${rec.tokenSource ?? ""}`;

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

/** A new rolled-up record of the day `dayMs` for the group of `rec`, holding `rec`. */
export function startGroup(dayMs: number, rec: UsageRecord): UsageRecord {
  const fresh: Fields = { time: new Date(dayMs).toISOString() };
  for (const field of GROUP_FIELDS) if (rec[field] !== undefined) fresh[field] = rec[field];
  fresh.promptTokens = rec.promptTokens;
  fresh.completionTokens = rec.completionTokens;
  fresh.latencyMs = rec.latencyMs;
  const n = rec.count ?? 1;
  if (n > 1) fresh.count = n;
  return fresh as unknown as UsageRecord;
}

/** Adds `rec` (itself possibly rolled up or folded: its `count` says how many requests it is) to its group. */
export function addToGroup(into: UsageRecord, rec: UsageRecord): void {
  const had = into.count ?? 1;
  const n = rec.count ?? 1;
  into.promptTokens += rec.promptTokens;
  into.completionTokens += rec.completionTokens;
  into.latencyMs = round3((into.latencyMs * had + rec.latencyMs * n) / (had + n));
  into.count = had + n;
}
