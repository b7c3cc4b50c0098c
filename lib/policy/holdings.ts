/**
 * @module What an owner (a key or a user) holds right now, as the store keeps it for every gateway process:
 * `["holds", scope, id]` maps each process to its share, which that process alone writes: its requests in
 * progress, and tokens not in the token counters yet (reserved by requests in progress, billed to requests
 * whose usage record the ledger has not written, or the allowance it may still admit from), by the UTC day
 * they count on.
 *
 * A share carries the end of its lease. Its process renews the lease while it holds anything, so the share of
 * a process that died is ignored once the lease ran out and dropped by the next process that writes the
 * record: a crash between reserving and settling blocks nothing for longer than a lease.
 */
import { labelsOf, PERIOD_NAMES, type PeriodKeys, type PeriodName, type TotalsScope } from "../usage/mod.ts";

export interface Share {
  /** Lease end, ms since the epoch on the writer's wall clock. */
  until: number;
  inflight: number;
  /** Tokens by day label (`d:2026-11-22`). */
  tokens: Record<string, number>;
}

/** Shares by process id. */
export type Holdings = Record<string, Share>;

export const HOLDS_PREFIX = "holds";

export function holdingsKey(scope: TotalsScope, id: string): Deno.KvKey {
  return [HOLDS_PREFIX, scope, id];
}

/** What the other live shares hold, in the periods of `labels`. */
export interface OthersHeld {
  /** The other processes with a live share. */
  processes: number;
  inflight: number;
  tokens: Record<PeriodName, number>;
}

/** The period labels of a day label's day, one shared object per day. */
export function dayLabels(day: string): PeriodKeys {
  return labelsOf(Date.parse(`${day.slice(2)}T00:00:00Z`));
}

export function othersHeld(
  holdings: Holdings | null,
  me: string,
  wallNow: number,
  labels: PeriodKeys,
): OthersHeld {
  const held: OthersHeld = { processes: 0, inflight: 0, tokens: { day: 0, week: 0, month: 0 } };
  if (!holdings) return held;
  for (const [process, share] of Object.entries(holdings)) {
    if (process === me || share.until <= wallNow) continue;
    held.processes++;
    held.inflight += share.inflight;
    for (const [day, tokens] of Object.entries(share.tokens)) {
      const of = day === labels.day ? labels : dayLabels(day);
      for (const period of PERIOD_NAMES) if (of[period] === labels[period]) held.tokens[period] += tokens;
    }
  }
  return held;
}

/** The record with `mine` as this process's share (none when undefined) and lapsed shares dropped. */
export function withShare(
  holdings: Holdings | null,
  me: string,
  mine: Share | undefined,
  wallNow: number,
): Holdings {
  const next: Holdings = {};
  for (const [process, share] of Object.entries(holdings ?? {})) {
    if (process !== me && share.until > wallNow) next[process] = share;
  }
  if (mine) next[me] = mine;
  return next;
}
