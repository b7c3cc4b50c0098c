/**
 * @module How a batch row stores its records: each record as the list of its values, and once per row the
 * list of field names of each distinct record shape (records are built by a handful of code paths, so a
 * row has one to three shapes). Field names were half of a row stored as objects, and SQLite's work per
 * commit grows with the bytes written.
 *
 * Decoding gives back records equal to those recorded, down to their field order and to a field present
 * with an undefined value. The list of values is also the ledger's own copy of a record, taken when it is
 * queued, so a caller reusing its object cannot change a record already counted.
 */
import type { UsageRecord } from "./types.ts";

/** A batch row's value: `records[i][0]` indexes `fields`, the rest are that shape's values in order. */
export interface BatchRow {
  fields: string[][];
  records: unknown[][];
}

/** A record as queued: its values after its shape, whose names `names` holds until the row is built. */
export type EncodedRecord = unknown[];

/** Bound of what V8's serializer writes for a value: tag, length of up to five bytes, padding, content. */
function valueBytes(value: unknown): number {
  switch (typeof value) {
    case "string":
      return value.length * 2 + 7;
    case "number":
    case "boolean":
    case "undefined":
      return 9;
    default:
      if (value === null) return 1;
      try {
        return (JSON.stringify(value) ?? "").length * 10 + 64;
      } catch {
        return 65_536;
      }
  }
}

/** Bound of a list of field names in a row. */
export function namesBytes(names: readonly string[]): number {
  let n = 16;
  for (const name of names) n += name.length * 2 + 7;
  return n;
}

const MAX_SHAPES = 256;

/** Turns records into value lists, knowing each shape (field names in order) by one interned array. */
export class RecordEncoder {
  readonly #shapes: string[][] = [];
  #last: string[] | undefined;
  /** Bound of the serialized size of the last encoded record, its shape's names excepted. */
  bytes = 0;
  /** The shape of the last encoded record. */
  names: string[] = [];

  encode(rec: UsageRecord): EncodedRecord {
    const out: EncodedRecord = [0];
    const last = this.#last;
    let same = last !== undefined;
    let bytes = 16;
    let i = 0;
    for (const field in rec) {
      const value = (rec as unknown as Record<string, unknown>)[field];
      out.push(value);
      bytes += valueBytes(value);
      if (same && last![i] !== field) same = false;
      i++;
    }
    this.bytes = bytes;
    this.names = same && last!.length === i ? last! : this.#intern(rec);
    return out;
  }

  #intern(rec: UsageRecord): string[] {
    const names: string[] = [];
    for (const field in rec) names.push(field);
    let shape = this.#shapes.find((s) => s.length === names.length && s.every((n, i) => n === names[i]));
    if (!shape) {
      // Shapes are few in practice; should they not be, the oldest ones are simply made again when seen.
      if (this.#shapes.length >= MAX_SHAPES) this.#shapes.length = 0;
      this.#shapes.push(shape = names);
    }
    this.#last = shape;
    return shape;
  }
}

/** The record at `place` in a row. */
export function decodeRecord(row: BatchRow, place: number): UsageRecord {
  const values = row.records[place];
  const names = row.fields[values[0] as number];
  const rec: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) rec[names[i]] = values[i + 1];
  return rec as unknown as UsageRecord;
}

/** A row's records, in their recorded order. */
export function decodeRow(row: BatchRow): UsageRecord[] {
  const out = new Array<UsageRecord>(row.records.length);
  for (let r = 0; r < out.length; r++) out[r] = decodeRecord(row, r);
  return out;
}

export function isBatchRow(value: unknown): value is BatchRow {
  return typeof value === "object" && value !== null && Array.isArray((value as BatchRow).fields) &&
    Array.isArray((value as BatchRow).records);
}
