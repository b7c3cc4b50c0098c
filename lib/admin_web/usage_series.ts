/**
 * @module Requests and tokens over time, for the admin page's charts: per hour for the last 48 hours and per
 * day for the last 30 days, for the whole gateway, each key and each user.
 *
 * Read from the ledger rows, which every gateway process writes, so the charts show the whole fleet. Like
 * `UsageSummary`, the first read scans the 30 days once and later reads rescan only the last few seconds
 * (rows are committed up to a group commit after their id was drawn); ids seen in that overlap are skipped.
 */
import { decodeTime, encodeTime } from "ulid";
import type { UsageRecord } from "../usage/mod.ts";
import { type LedgerRow, rowRecords, USAGE_PREFIX } from "../usage/kv_layout.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
export const HOURS = 48;
export const DAYS = 30;
const OVERLAP_MS = 5_000;

export interface Point {
  /** Start of the hour or day, epoch ms (UTC). */
  start: number;
  requests: number;
  tokens: number;
}

export interface Series {
  hours: Point[];
  days: Point[];
}

/** `all`, `key:ID` or `user:NAME`. */
export type Scope = string;

type Buckets = Map<number, { requests: number; tokens: number }>;

export class UsageSeries {
  #hours = new Map<Scope, Buckets>();
  #days = new Map<Scope, Buckets>();
  #seen = new Map<string, number>();
  #scanFrom = -1;
  #refreshing?: Promise<void>;

  constructor(private readonly kv: Deno.Kv, private readonly now: () => number = Date.now) {}

  refresh(): Promise<void> {
    this.#refreshing ??= this.#scan().finally(() => this.#refreshing = undefined);
    return this.#refreshing;
  }

  /** The scopes that had traffic in the last 30 days. */
  async scopes(): Promise<Scope[]> {
    await this.refresh();
    return [...this.#days.keys()].filter((scope) => scope !== "all").sort();
  }

  async series(scope: Scope): Promise<Series> {
    await this.refresh();
    const now = this.now();
    const hour0 = Math.floor(now / HOUR_MS) * HOUR_MS - (HOURS - 1) * HOUR_MS;
    const day0 = Math.floor(now / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS;
    const points = (buckets: Buckets | undefined, first: number, step: number, n: number) =>
      Array.from({ length: n }, (_, i) => {
        const start = first + i * step;
        return { start, requests: 0, tokens: 0, ...buckets?.get(start) };
      });
    return {
      hours: points(this.#hours.get(scope), hour0, HOUR_MS, HOURS),
      days: points(this.#days.get(scope), day0, DAY_MS, DAYS),
    };
  }

  async #scan(): Promise<void> {
    const now = this.now();
    const horizon = Math.floor(now / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS;
    if (this.#scanFrom < horizon - OVERLAP_MS) this.#scanFrom = Math.max(this.#scanFrom, horizon);
    // A time id cannot be before the epoch (a clock that young only happens in tests, but must not fail).
    const start: Deno.KvKey = [USAGE_PREFIX, encodeTime(Math.max(0, this.#scanFrom))];
    const nextFrom = Math.max(this.#scanFrom, now - OVERLAP_MS);
    for await (const entry of this.kv.list<LedgerRow>({ prefix: [USAGE_PREFIX], start })) {
      const id = entry.key[1] as string;
      if (this.#seen.has(id)) continue;
      const time = decodeTime(id);
      if (time >= nextFrom) this.#seen.set(id, time);
      for (const rec of rowRecords(entry.value)) this.#add(rec, horizon);
    }
    this.#scanFrom = nextFrom;
    for (const [id, time] of this.#seen) if (time < this.#scanFrom) this.#seen.delete(id);
    this.#prune(horizon, Math.floor(now / HOUR_MS) * HOUR_MS - (HOURS - 1) * HOUR_MS);
  }

  #add(rec: UsageRecord, horizon: number): void {
    const time = Date.parse(rec.time);
    if (time < horizon) return;
    const tokens = rec.promptTokens + rec.completionTokens;
    // A folded row stands for several refusals (`refusal_fold.ts`).
    const requests = rec.count ?? 1;
    const scopes = ["all"];
    if (rec.keyId !== undefined) scopes.push(`key:${rec.keyId}`);
    if (rec.user !== undefined) scopes.push(`user:${rec.user}`);
    for (const scope of scopes) {
      bump(this.#hours, scope, Math.floor(time / HOUR_MS) * HOUR_MS, requests, tokens);
      bump(this.#days, scope, Math.floor(time / DAY_MS) * DAY_MS, requests, tokens);
    }
  }

  /** Buckets that scrolled out of the charts are dropped, so memory stays bounded by the window. */
  #prune(dayFloor: number, hourFloor: number): void {
    for (const [table, floor] of [[this.#hours, hourFloor], [this.#days, dayFloor]] as const) {
      for (const [scope, buckets] of table) {
        for (const start of buckets.keys()) if (start < floor) buckets.delete(start);
        if (buckets.size === 0) table.delete(scope);
      }
    }
  }
}

function bump(
  table: Map<Scope, Buckets>,
  scope: Scope,
  start: number,
  requests: number,
  tokens: number,
): void {
  let buckets = table.get(scope);
  if (!buckets) table.set(scope, buckets = new Map());
  const bucket = buckets.get(start) ?? { requests: 0, tokens: 0 };
  bucket.requests += requests;
  bucket.tokens += tokens;
  buckets.set(start, bucket);
}
