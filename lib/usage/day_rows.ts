/**
 * @module One day's rolled-up rows as a retention pass holds them between its steps. Each of the day's groups
 * (`day_rollup.ts`) lives in one row, at one place, from the moment it is first written: merging more of the
 * day's records rewrites the rows whose groups grew, in place, and appends new groups to the last row. So a
 * day ends as its groups and no more, however many steps it took, and a key's index row is rewritten only
 * when that key gained a group in the row (its places changed), not at every step.
 *
 * The rows' ids are the day's first instant tagged `ROLLUP` and numbered (`rollupId`): after the day's start,
 * before any later instant's rows, so every reader of the ledger reads them as it reads any row.
 */
import { encodeTime } from "ulid";
import { Batch, MAX_BATCH_RECORDS } from "./batch.ts";
import { addToGroup, groupOf, startGroup } from "./day_rollup.ts";
import { type LedgerRow, rowRecords, usageByKeyKey, usageKey } from "./kv_layout.ts";
import { RecordEncoder } from "./row_codec.ts";
import type { UsageRecord } from "./types.ts";

const ROLLUP_TAG = "ROLLUP";
const SEQ_DIGITS = 10;

/** The id of a day's `seq`-th rolled-up row: after the day's first instant, before any later instant's rows. */
export const rollupId = (dayMs: number, seq: number) =>
  encodeTime(dayMs) + ROLLUP_TAG + String(seq).padStart(SEQ_DIGITS, "0");

export const isRollupId = (id: string) => id.slice(10, 10 + ROLLUP_TAG.length) === ROLLUP_TAG;

interface RolledRow {
  seq: number;
  /** Its groups, in their places. */
  records: UsageRecord[];
  /** In the store; null while the row does not exist there. */
  versionstamp: string | null;
  /** Each key's places in the row as the store has them, joined: an index row is written only if they differ. */
  places: Map<string, string>;
  /** Grown since it was last written. */
  dirty: boolean;
  /** What `write` put in the commit, taken as the store's once the commit lands. */
  pending?: Map<string, string>;
}

export class DayRows {
  readonly #rows: RolledRow[] = [];
  readonly #groups = new Map<string, UsageRecord>();
  readonly #rowOf = new Map<UsageRecord, RolledRow>();

  private constructor(readonly dayMs: number) {}

  /** The day's rolled-up rows as the store has them (none, for a day not rolled up yet). */
  static async load(kv: Deno.Kv, dayMs: number): Promise<DayRows> {
    const day = new DayRows(dayMs);
    // ':' sorts after every digit: the range holds exactly the day's rolled-up rows.
    const range = {
      start: usageKey(rollupId(dayMs, 0)),
      end: usageKey(encodeTime(dayMs) + ROLLUP_TAG + ":"),
    };
    for await (const entry of kv.list<LedgerRow>(range)) {
      const id = String(entry.key[1]);
      const records = [...rowRecords(entry.value)];
      const row: RolledRow = {
        seq: Number(id.slice(-SEQ_DIGITS)),
        records,
        versionstamp: entry.versionstamp,
        places: placesOf(records),
        dirty: false,
      };
      day.#rows.push(row);
      // A group written twice (by an earlier version of the pass) grows in its later row.
      for (const rec of records) day.#place(rec, row);
    }
    return day;
  }

  /** Adds a record of this day to its group, or starts the group. */
  add(rec: UsageRecord): void {
    const group = this.#groups.get(groupOf(rec));
    if (group) {
      addToGroup(group, rec);
      this.#rowOf.get(group)!.dirty = true;
      return;
    }
    const fresh = startGroup(this.dayMs, rec);
    const last = this.#rows.at(-1);
    const row = last && last.records.length < MAX_BATCH_RECORDS ? last : this.#newRow();
    row.records.push(fresh);
    row.dirty = true;
    this.#place(fresh, row);
  }

  /**
   * Adds to `op` every row that grew, checked against the version this pass last saw, with the index rows
   * whose places changed. A row that no longer fits a value's bounds (its figures grew longer) keeps what
   * fits, and the rest moves to a new row.
   */
  write(op: Deno.AtomicOperation): void {
    const encoder = new RecordEncoder();
    for (let r = 0; r < this.#rows.length; r++) {
      const row = this.#rows[r];
      if (!row.dirty) continue;
      const batch = new Batch(undefined, false);
      let fits = 0;
      for (const rec of row.records) {
        const encoded = encoder.encode(rec);
        if (!batch.tryAdd(rec, encoded, encoder.names, encoder.bytes, this.dayMs)) break;
        fits++;
      }
      if (fits < row.records.length) {
        const moved = row.records.splice(fits);
        const next = this.#newRow();
        for (const rec of moved) {
          next.records.push(rec);
          this.#rowOf.set(rec, next);
        }
      }
      const id = rollupId(this.dayMs, row.seq);
      batch.seal(id);
      op.check({ key: usageKey(id), versionstamp: row.versionstamp });
      op.set(usageKey(id), batch.row);
      const written = new Map<string, string>();
      for (const [keyId, places] of batch.index) {
        const joined = places.join(",");
        written.set(keyId, joined);
        if (row.places.get(keyId) !== joined) op.set(usageByKeyKey(keyId, id), places);
      }
      for (const keyId of row.places.keys()) if (!written.has(keyId)) op.delete(usageByKeyKey(keyId, id));
      row.pending = written;
    }
  }

  /** The commit holding what `write` added landed: the store now has those rows, at `versionstamp`. */
  landed(versionstamp: string): void {
    for (const row of this.#rows) {
      if (!row.pending) continue;
      row.places = row.pending;
      row.pending = undefined;
      row.versionstamp = versionstamp;
      row.dirty = false;
    }
  }

  #newRow(): RolledRow {
    const row: RolledRow = {
      seq: (this.#rows.at(-1)?.seq ?? -1) + 1,
      records: [],
      versionstamp: null,
      places: new Map(),
      dirty: true,
    };
    this.#rows.push(row);
    return row;
  }

  #place(group: UsageRecord, row: RolledRow): void {
    this.#groups.set(groupOf(group), group);
    this.#rowOf.set(group, row);
  }
}

/** Each key's places in a row's records, joined, as `Batch.seal` makes its index rows. */
function placesOf(records: readonly UsageRecord[]): Map<string, string> {
  const places = new Map<string, number[]>();
  records.forEach((rec, i) => {
    if (rec.keyId === undefined) return;
    const list = places.get(rec.keyId);
    if (list) list.push(i);
    else places.set(rec.keyId, [i]);
  });
  return new Map([...places].map(([keyId, list]) => [keyId, list.join(",")]));
}
