/**
 * @module Slowing guesses of the admin token, per client address. The first few failures cost nothing (a
 * typo); from the fifth on, each one closes the address for twice as long as the one before (1 s, 2 s, 4 s
 * … at most 5 minutes), during which every attempt from it is refused unchecked, the right token included:
 * checking it would let the guessing go on. An address is forgotten 30 minutes after its last failure.
 *
 * An IPv6 client is counted by its /64, which one host or one home usually gets whole, so walking through
 * its own addresses buys nothing. The table is bounded: beyond 10,000 addresses the one that failed least
 * recently is forgotten. It lives in the process: each gateway (and each worker) counts on its own, so N of
 * them allow N times the guesses, still a few per minute.
 */
import ipaddr from "ipaddr.js";
import { parseAddress } from "../policy/ip_address.ts";

export const FREE_FAILURES = 4;
const FIRST_WAIT_MS = 1_000;
const LONGEST_WAIT_MS = 5 * 60_000;
const FORGET_MS = 30 * 60_000;
const MAX_ADDRESSES = 10_000;

interface Failures {
  count: number;
  last: number;
  /** Until when the address is refused (ms since the epoch); 0: it is not. */
  until: number;
}

/** What one client is counted as: an IPv4 address, an IPv6 /64, or "unknown" for no address. */
export function throttleKey(address: string | undefined): string {
  const parsed = address === undefined ? null : parseAddress(address);
  if (!parsed) return "unknown";
  if (parsed.kind() === "ipv4") return parsed.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed}/64`)}/64`;
}

export class AdminThrottle {
  /** In the order of their last failure, oldest first: a Map keeps insertion order, and a failure re-inserts. */
  readonly #failures = new Map<string, Failures>();

  constructor(private readonly now: () => number, private readonly maxAddresses = MAX_ADDRESSES) {}

  /** Whole seconds `address` must wait before its next attempt is checked; 0 when it may try now. */
  retryAfter(address: string | undefined): number {
    const wait = (this.#failures.get(throttleKey(address))?.until ?? 0) - this.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  /** Counts a wrong token from `address`. */
  failed(address: string | undefined): void {
    const now = this.now();
    this.#forgetOld(now);
    const key = throttleKey(address);
    const entry = this.#failures.get(key) ?? { count: 0, last: now, until: 0 };
    this.#failures.delete(key);
    entry.count++;
    entry.last = now;
    if (entry.count > FREE_FAILURES) {
      entry.until = now + Math.min(FIRST_WAIT_MS * 2 ** (entry.count - FREE_FAILURES - 1), LONGEST_WAIT_MS);
    }
    this.#failures.set(key, entry);
    for (const oldest of this.#failures.keys()) {
      if (this.#failures.size <= this.maxAddresses) break;
      this.#failures.delete(oldest);
    }
  }

  /** Addresses held now. */
  get size(): number {
    return this.#failures.size;
  }

  #forgetOld(now: number): void {
    for (const [key, entry] of this.#failures) {
      if (entry.last + FORGET_MS > now) break;
      this.#failures.delete(key);
    }
  }
}
