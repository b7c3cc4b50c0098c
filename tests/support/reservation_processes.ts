/**
 * @module Gateway processes for the reservation tests: each its ledger and its reservations, on a store shared
 * with the others, asking and settling as the account does.
 */
import { basePolicy, type KeyRecord, type UserRecord } from "../../lib/store/records.ts";
import { UsageLedger } from "../../lib/usage/mod.ts";
import { limitsOf } from "../../lib/policy/quotas.ts";
import { type Hold, Reservations } from "../../lib/policy/reservations.ts";
import { sample } from "./usage_ledger.ts";

export const NOW = Date.parse("2026-11-22T12:00:00Z");

export function key(id: string, policy: Partial<KeyRecord> = {}): KeyRecord {
  const at = new Date(NOW).toISOString();
  return { ...basePolicy("m1"), id, digest: id, hint: "gwk_", createdAt: at, updatedAt: at, ...policy };
}

/** One gateway process: its ledger and its reservations, on a store it shares with others. */
export class Process {
  readonly ledger: UsageLedger;
  readonly reservations: Reservations;
  wall = Date.now();

  /** `flushIntervalMs`: how long the ledger lets a batch fill before it writes it on its own. */
  constructor(kv: Deno.Kv, leaseMs = 30_000, flushIntervalMs = 5) {
    this.ledger = new UsageLedger(kv, { flushIntervalMs });
    this.reservations = new Reservations({
      kv,
      ledger: this.ledger,
      defaultOutput: 4096,
      leaseMs,
      wallClock: () => this.wall,
    });
  }

  ask(k: KeyRecord, prompt: number, output?: number, user?: UserRecord): Promise<Hold> {
    return Promise.resolve(
      this.reservations.reserve(k.id, { limits: limitsOf(k, user, NOW), now: NOW, prompt, output }),
    );
  }

  /** What the account does as a request ends: the record to the ledger, then the settlement. */
  end(hold: Hold, k: KeyRecord, billed: number, user?: string): void {
    this.ledger.record(sample({ keyId: k.id, user, promptTokens: billed, completionTokens: 0 }));
    hold.settle(billed);
  }

  async close(): Promise<void> {
    await this.ledger.close();
    await this.reservations.close();
  }
}

/** Settles each outcome that is a hold, billing what it reserved (the worst a backend can do). */
export function billFully(p: Process, k: KeyRecord, prompt: number, user?: string) {
  return (outcome: PromiseSettledResult<Hold>) => {
    if (outcome.status === "fulfilled") p.end(outcome.value, k, prompt + outcome.value.output!, user);
  };
}
