/**
 * @module One group commit in the making: its records, the per-key index rows of them, the token counter
 * sums they add, and bounds on what the commit will weigh. A batch is written as one row holding all its
 * records, one row per distinct key holding the places of that key's records in it, and one write per
 * distinct counter, in one atomic commit, so records and counters can never disagree.
 *
 * The bounds keep the commit well inside Deno KV's limits (64 KiB per value, 100 checks, 1000 mutations,
 * 80 KiB of keys, 800 KiB of mutations), so it can never be refused for its size; a batch that would pass
 * one is sealed and the record starts the next. Once sealed (`seal`), a batch never changes: a retry after
 * a failed or uncertain commit writes exactly the rows the first attempt did, under the same id.
 */
import type { UsageRecord } from "./types.ts";
import { type CounterDelta, CounterSums, labelsOf } from "./counter_sums.ts";
import { type BatchRow, type EncodedRecord, RowCoding, shapeBytes } from "./row_codec.ts";
import { isoTimeMs } from "../runtime/iso_time_format.ts";

/**
 * A commit's cost in the store is mostly per commit (the counters, the sync), little per record, so batches
 * are large: their bytes (`MAX_ROW_BYTES`) end them first. A record's place in its batch fits the two bytes
 * an index row gives it past the first 256 (one byte each up to there, as rows were written before).
 */
export const MAX_BATCH_RECORDS = 1000;

/**
 * Record sizes are upper bounds of the serialized size (`RecordEncoder.bytes`), not estimates, so the margin
 * under KV's 64 KiB per value can be a quarter.
 */
export const MAX_ROW_BYTES = 48 * 1024;

const LIMITS = {
  /** One check guards the batch; each counter needs one, and KV allows 100 per operation. */
  counters: 90,
  /** Half of KV's 80 KiB of keys per operation. */
  keyBytes: 40_000,
};

/** The object and lists around the records (names, kinds, texts), and the store's header. */
const ROW_OVERHEAD = 64;
/** Bytes of a row id and its tag. */
const ID_BYTES = 28;

function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  return n;
}

/** A key part costs a tag byte, its UTF-8 bytes and a terminator. */
const partBytes = (part: unknown) => utf8Length(String(part)) + 2;

/** `["usage_by_key", keyId, id]`, written once per distinct key of a batch. */
const indexKeyBytes = (keyId: string) => partBytes("usage_by_key") + partBytes(keyId) + ID_BYTES;

/** The three counters `["tokens", scope, owner, label]` of an owner's day, each checked and written. */
const counterKeyBytes = (owner: string) => 3 * 2 * (partBytes("tokens") + 6 + partBytes(owner) + 16);

/** A key's places in its batch: a byte each while they fit one, as index rows were always written before. */
const placesRow = (places: number[]) =>
  places[places.length - 1] < 256 ? Uint8Array.from(places) : Uint16Array.from(places);

export class Batch {
  /** In the order they were recorded; a record's place in its row is its place in the ledger. */
  readonly records: EncodedRecord[] = [];
  /** The field names of each record shape in the batch, and each shape's place in that list. */
  readonly fields: string[][] = [];
  /** How each shape keeps its values (`row_codec.ts`), by its place in `fields`. */
  readonly kinds: string[] = [];
  /** Each shape's place in `fields`, by its field names and then by how it keeps its values. */
  readonly #shapes = new Map<string[], Map<number, number>>();
  readonly #coding = new RowCoding();
  /** The places of each key's records in `records`, ascending: that key's index row. */
  readonly byKey = new Map<string, number[]>();
  readonly sums = new CounterSums();
  /** Bound of the batch row's serialized size. */
  valueBytes = ROW_OVERHEAD;
  keyBytes = partBytes("usage") + ID_BYTES;
  /** Tokens of all its records, kept within exact arithmetic. */
  tokens = 0;
  /** The latest record time: the row id must not precede it. */
  maxTimeMs = 0;
  /** Set by `seal`. */
  id = "";
  counters: CounterDelta[] = [];
  /** Set by `seal`: each key's index row value. */
  readonly index: [keyId: string, places: Uint8Array | Uint16Array][] = [];

  /**
   * `expireIn` is set for rows not kept for good; such records never share a row with kept ones. A batch that
   * is not `counted` adds nothing to the token counters (rolled-up or seeded rows), so no counter bounds it.
   */
  constructor(readonly expireIn: number | undefined, readonly counted = true) {}

  /**
   * Adds a record unless that would take the batch past a limit; an empty batch takes any record. `encoded`,
   * `names` and `bytes` are what a `RecordEncoder` made of `rec`, `timeMs` its parsed time.
   */
  tryAdd(rec: UsageRecord, encoded: EncodedRecord, names: string[], bytes: number, timeMs: number): boolean {
    const tokens = rec.promptTokens + rec.completionTokens;
    const { keyId, user } = rec;
    const first = this.records.length === 0;
    const coding = this.#coding;
    coding.plan(names, encoded, bytes, timeMs);
    bytes = coding.bytes;
    const shapeKey = coding.shapeKey;
    let shape = this.#shapes.get(names)?.get(shapeKey);
    if (shape === undefined) bytes += shapeBytes(names);
    if (
      !first && (this.records.length >= MAX_BATCH_RECORDS || this.valueBytes + bytes > MAX_ROW_BYTES ||
        this.tokens + tokens > Number.MAX_SAFE_INTEGER)
    ) return false;
    let addedKeyBytes = 0;
    let addedSlots = 0;
    const index = keyId === undefined ? undefined : this.byKey.get(keyId);
    if (keyId !== undefined && index === undefined) addedKeyBytes += indexKeyBytes(keyId);
    const labels = tokens > 0 && this.counted ? labelsOf(timeMs) : undefined;
    const keySum = labels && keyId !== undefined ? this.sums.find("key", keyId, labels) : undefined;
    const userSum = labels && user !== undefined ? this.sums.find("user", user, labels) : undefined;
    if (labels) {
      if (keyId !== undefined && keySum === undefined) addedSlots++, addedKeyBytes += counterKeyBytes(keyId);
      if (user !== undefined && userSum === undefined) addedSlots++, addedKeyBytes += counterKeyBytes(user);
    }
    if (
      !first &&
      ((this.sums.slots + addedSlots) * 3 > LIMITS.counters ||
        this.keyBytes + addedKeyBytes > LIMITS.keyBytes)
    ) return false;
    if (keyId !== undefined) {
      if (index) index.push(this.records.length);
      else this.byKey.set(keyId, [this.records.length]);
    }
    if (shape === undefined) {
      let byKind = this.#shapes.get(names);
      if (!byKind) this.#shapes.set(names, byKind = new Map());
      byKind.set(shapeKey, shape = this.fields.length);
      this.fields.push(names);
      this.kinds.push(coding.kinds(names.length));
    }
    coding.keep(encoded);
    encoded[0] = shape;
    this.records.push(encoded);
    if (labels) {
      if (keyId !== undefined) this.sums.add("key", keyId, labels, tokens, keySum);
      if (user !== undefined) this.sums.add("user", user, labels, tokens, userSum);
    }
    this.valueBytes += bytes;
    this.keyBytes += addedKeyBytes;
    this.tokens += tokens;
    if (timeMs > this.maxTimeMs) this.maxTimeMs = timeMs;
    return true;
  }

  /** The batch row's value. */
  get row(): BatchRow {
    return { fields: this.fields, records: this.records, kinds: this.kinds, strings: this.#coding.strings };
  }

  /** Fixes the batch's row id, its index rows and its counter increments; nothing is added afterwards. */
  seal(id: string): void {
    this.id = id;
    this.counters = this.sums.deltas();
    // KV stores a byte array as it is; places past 255 take two bytes each.
    for (const [keyId, places] of this.byKey) this.index.push([keyId, placesRow(places)]);
  }
}

/** The latest instant a row id can encode is far later; this one still prints as a normal ISO date. */
const LAST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const storableTime = (ms: number) => ms > 0 && ms <= LAST_TIME;
const isCount = (n: number) => Number.isSafeInteger(n) && n >= 0;

/** The record's time in ms when it needs no repair, else NaN. Cheap: the common case allocates nothing. */
export function validTime(rec: UsageRecord): number {
  const ms = isoTimeMs(rec.time);
  return storableTime(ms) && isCount(rec.promptTokens) && isCount(rec.completionTokens) ? ms : NaN;
}

/**
 * A copy of `rec` fit to store, and what had to be repaired to make it so. The request happened and its
 * tokens were spent: a malformed record is mended and kept rather than refused, since refusing would
 * lose it.
 */
export function repair(rec: UsageRecord, nowMs: number): { rec: UsageRecord; problems: string[] } {
  const fit = { ...rec };
  const problems: string[] = [];
  if (!storableTime(Date.parse(rec.time))) {
    fit.time = new Date(nowMs).toISOString();
    problems.push(`time ${JSON.stringify(rec.time)} is not an ISO 8601 instant, used ${fit.time}`);
  }
  for (const field of ["promptTokens", "completionTokens"] as const) {
    const n = rec[field];
    if (isCount(n)) continue;
    const value = Number(n);
    fit[field] = value > 0 ? Math.min(Math.round(value), Number.MAX_SAFE_INTEGER) : 0;
    problems.push(`${field} ${n} is not a non-negative integer, counted as ${fit[field]}`);
  }
  return { rec: fit, problems };
}
