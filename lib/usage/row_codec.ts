/**
 * @module How a batch row stores its records: each record as the list of its values, and once per row the
 * list of field names of each distinct record shape (records are built by a handful of code paths, so a
 * row has one to three shapes). Field names were half of a row stored as objects. A row also keeps each
 * distinct text once (a key's id, its model, user and server, the format and status recur in nearly every
 * record) and records hold its place, and a record's time is kept as its instant when `isoTime` writes that
 * instant as the same text: a short stream's record takes 56.5 bytes instead of 130.3, so a row under the
 * batch's bound holds 571 of them instead of 169, and the ledger commits 3.4 times less often. A commit costs
 * the store's thread about the same whatever its size (500–670 µs of CPU for a row of 1 B to 22 KB), and
 * under load that thread shares the machine with the gateway's own.
 *
 * Decoding gives back records equal to those recorded, down to their field order and to a field present
 * with an undefined value. The list of values is also the ledger's own copy of a record, taken when it is
 * queued, so a caller reusing its object cannot change a record already counted.
 */
import type { UsageRecord } from "./types.ts";
import { isoTime } from "../runtime/iso_time_format.ts";

/** A batch row's value: `records[i][0]` indexes `fields`, the rest are that shape's values in order. */
export interface BatchRow {
  fields: string[][];
  records: unknown[][];
  /**
   * How each shape's values are kept, a character per field: `v` as it is, `s` the place of its text in
   * `strings`, `t` an instant in ms, read back as `isoTime` writes it. Rows written before have neither
   * list, and hold every value as it is.
   */
  kinds?: string[];
  strings?: string[];
}

const KIND_TEXT = "s".charCodeAt(0);
const KIND_TIME = "t".charCodeAt(0);
/** Texts are kept once for the fields up to this place (a bit each in a shape's key). */
const MAX_TEXT_FIELD = 30;

/** A record as queued: its values after its shape, whose names `names` holds until the row is built. */
export type EncodedRecord = unknown[];

const textBytes = (text: string) => text.length * 2 + 7;

/** Bound of a number as V8's serializer writes it: a tag and eight bytes (a small integer takes fewer). */
const NUMBER_BYTES = 9;

/**
 * Bound of a place in a row's texts: the engine holds it as a small integer, which V8's serializer writes
 * as a tag and its zigzag varint (seven bits a byte). A number from elsewhere may be held as a double
 * whatever its value, so only places are counted this way.
 */
const placeBytes = (place: number) => place < 2 ** 6 ? 2 : place < 2 ** 13 ? 3 : 4;

/** Bound of what V8's serializer writes for a value: tag, length of up to five bytes, padding, content. */
function valueBytes(value: unknown): number {
  switch (typeof value) {
    case "string":
      return textBytes(value);
    case "number":
      return NUMBER_BYTES;
    case "boolean":
    case "undefined":
      return 1;
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
  for (const name of names) n += textBytes(name);
  return n;
}

/** Bound of what a new shape adds to a row: its names, and its kinds (a character per field). */
export const shapeBytes = (names: readonly string[]) =>
  namesBytes(names) + textBytes("v".repeat(names.length));

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

/**
 * A row's texts and the way each of its shapes keeps its values. `plan` says how a record would be kept and
 * what it would add to the row's bytes, without changing anything (the batch may not take it); `keep`
 * then turns the planned record's values into what the row holds.
 */
export class RowCoding {
  readonly strings: string[] = [];
  readonly #places = new Map<string, number>();
  /** The planned record: a bit per value kept as a place in `strings`, the place of its instant (or 0). */
  mask = 0;
  timeSlot = 0;
  timeMs = 0;
  /** Bound of the planned record's bytes in the row, the texts it adds included (its shape's excepted). */
  bytes = 0;

  /** `bytes`: the encoder's bound of the record's bytes with every value kept as it is. */
  plan(names: readonly string[], encoded: EncodedRecord, bytes: number, timeMs: number): void {
    let mask = 0;
    let timeSlot = 0;
    const next = this.strings.length;
    for (let i = 1; i < encoded.length && i <= MAX_TEXT_FIELD; i++) {
      const value = encoded[i];
      if (typeof value !== "string") continue;
      if (timeSlot === 0 && names[i - 1] === "time" && isoTime(timeMs) === value) {
        timeSlot = i;
        bytes += NUMBER_BYTES - textBytes(value);
        continue;
      }
      mask |= 1 << i;
      const place = this.#places.get(value);
      // A text new to the row is counted whole (once per occurrence: a bound), and its place as the next one.
      bytes += placeBytes(place ?? next + i) - (place === undefined ? 0 : textBytes(value));
    }
    this.mask = mask;
    this.timeSlot = timeSlot;
    this.timeMs = timeMs;
    this.bytes = bytes;
  }

  /** The planned shape's key among those of the same field names. */
  get shapeKey(): number {
    return this.mask * 32 + this.timeSlot;
  }

  /** The planned shape's kinds, for a row's `kinds`. */
  kinds(fields: number): string {
    let kinds = "";
    for (let i = 1; i <= fields; i++) kinds += i === this.timeSlot ? "t" : this.mask & (1 << i) ? "s" : "v";
    return kinds;
  }

  /** Turns the planned record's texts and instant into what the row keeps. */
  keep(encoded: EncodedRecord): void {
    const mask = this.mask;
    for (let i = 1; i < encoded.length && i <= MAX_TEXT_FIELD; i++) {
      if (mask & (1 << i)) encoded[i] = this.#place(encoded[i] as string);
    }
    if (this.timeSlot) encoded[this.timeSlot] = this.timeMs;
  }

  #place(text: string): number {
    let place = this.#places.get(text);
    if (place === undefined) {
      place = this.strings.length;
      this.strings.push(text);
      this.#places.set(text, place);
    }
    return place;
  }
}

/** The record at `place` in a row. */
export function decodeRecord(row: BatchRow, place: number): UsageRecord {
  const values = row.records[place];
  const shape = values[0] as number;
  const names = row.fields[shape];
  const kinds = row.kinds?.[shape];
  const rec: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) {
    const value = values[i + 1];
    const kind = kinds === undefined ? 0 : kinds.charCodeAt(i);
    rec[names[i]] = kind === KIND_TEXT
      ? row.strings![value as number]
      : kind === KIND_TIME
      ? isoTime(value as number)
      : value;
  }
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
