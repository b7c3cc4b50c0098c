/**
 * @module Snapshot reads: each range of a SnapshotRead answered from the local store, in request order, with
 * keys, values and versionstamps on the wire as the local store holds them. A read of single keys only (what
 * `get` and `getMany` send) is one `getMany`, so one snapshot; ranges are listed one after another.
 */
import { compareBytes, encodeKey } from "./key_codec.ts";
import { planRange, type RangePlan } from "./ranges.ts";
import {
  BadRequest,
  decode,
  encode,
  messages,
  SnapshotReadStatus,
  type WireEntry,
  type WireReadRange,
} from "./schema.ts";
import { encodeValue, versionstampBytes } from "./value_codec.ts";

/** denokv's limits for one read: ranges, and entries over all of them. */
const MAX_RANGES = 10;
const MAX_ENTRIES = 1000;

export async function snapshotRead(kv: Deno.Kv, body: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const { ranges } = decode<{ ranges: WireReadRange[] }>(messages.SnapshotRead, body);
  if (ranges.length > MAX_RANGES) throw new BadRequest("Too many read ranges requested in one read request.");
  if (ranges.some((r) => r.limit < 1)) {
    throw new BadRequest("The read range limit of the snapshot read request is invalid.");
  }
  if (ranges.reduce((sum, r) => sum + r.limit, 0) > MAX_ENTRIES) {
    throw new BadRequest(
      "The total number of entries requested across read ranges in the read request is too large.",
    );
  }
  const plans = ranges.map((r) => planRange(r.start, r.end));
  const outputs = plans.every((p) => "point" in p)
    ? await readPoints(kv, plans as { point: Deno.KvKey }[])
    : await readRanges(kv, ranges, plans);
  return encode(messages.SnapshotReadOutput, {
    ranges: outputs.map((values) => ({ values })),
    readDisabled: false,
    readIsStronglyConsistent: true,
    status: SnapshotReadStatus.SUCCESS,
  });
}

async function readPoints(kv: Deno.Kv, plans: { point: Deno.KvKey }[]): Promise<WireEntry[][]> {
  const entries = await kv.getMany(plans.map((p) => p.point));
  return entries.map((entry) => entry.versionstamp === null ? [] : [wireEntry(entry)]);
}

async function readRanges(kv: Deno.Kv, ranges: WireReadRange[], plans: RangePlan[]): Promise<WireEntry[][]> {
  const outputs: WireEntry[][] = [];
  for (const [i, range] of ranges.entries()) outputs.push(await readRange(kv, range, plans[i]));
  return outputs;
}

async function readRange(kv: Deno.Kv, range: WireReadRange, plan: RangePlan): Promise<WireEntry[]> {
  if ("empty" in plan) return [];
  if ("point" in plan) {
    const entry = await kv.get(plan.point);
    return entry.versionstamp === null ? [] : [wireEntry(entry)];
  }
  const values: WireEntry[] = [];
  // One more than the limit: a bound just past a key skips that key.
  const batchSize = Math.min(range.limit + 1, MAX_ENTRIES);
  for await (const entry of kv.list(plan.selector, { reverse: range.reverse, batchSize })) {
    const key = encodeKey(entry.key);
    if (compareBytes(key, range.start) < 0) {
      if (range.reverse) break;
      continue;
    }
    if (compareBytes(key, range.end) >= 0) {
      if (!range.reverse) break;
      continue;
    }
    values.push(wireEntry(entry, key));
    if (values.length >= range.limit) break;
  }
  return values;
}

function wireEntry(entry: Deno.KvEntryMaybe<unknown>, key = encodeKey(entry.key)): WireEntry {
  const { data, encoding } = encodeValue(entry.value);
  return { key, value: data, encoding, versionstamp: versionstampBytes(entry.versionstamp!) };
}
