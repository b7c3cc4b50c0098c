/**
 * @module A zod object schema narrowed to the keys a value has. zod's compiled object parser runs every key's
 * schema on every parse, present or not, each run with a result object and an issues array of its own: a chat
 * body has some 25 known keys and usually sends 3 or 4, a message 10 and sends 2. An absent key whose schema is
 * optional in and out contributes nothing to the result and can raise no issue, so parsing with the schema
 * picked to the present keys (and those that are not optional) gives the same result and the same issues.
 * Narrowed schemas are kept by the set of keys; past `limit` sets, a new set is parsed with the whole schema,
 * so bodies with ever-changing keys cannot make the gateway build schemas without end. An object with
 * refinements, or of more than 30 keys, is always parsed whole.
 */
import type { z } from "zod";
import { bitsOf, listedBits } from "../runtime/listed_keys.ts";

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** A bit per key: beyond this many keys the schema is used whole. */
const MAX_KEYS = 30;

export function narrowedByKeys<T extends AnyObject>(schema: T, limit = 64): (value: unknown) => T {
  const keys = Object.keys(schema.shape);
  // An object with refinements cannot be picked (they may read any key): it is parsed whole.
  if (keys.length > MAX_KEYS || schema._zod.def.checks?.length) return () => schema;
  let always = 0;
  keys.forEach((key, bit) => {
    const own = schema.shape[key]._zod;
    if (own.optin !== "optional" || own.optout !== "optional") always |= 1 << bit;
  });
  // A plain object's keys are listed (`listed_keys.ts`): a body sends a few of some 25 (0.06 against 0.7 µs a
  // body and its message), unless a key of the schema is one that every object inherits without listing it.
  const bits = bitsOf(keys);
  const listable = !keys.some((key) => key in Object.prototype);
  const narrowed = new Map<number, T>();
  const narrow = (mask: number): T => {
    const picked: Record<string, true> = {};
    keys.forEach((key, bit) => {
      if (mask & (1 << bit)) picked[key] = true;
    });
    return schema.pick(picked) as unknown as T;
  };
  return (value) => {
    if (typeof value !== "object" || value === null) return schema;
    let mask = always;
    if (listable && Object.getPrototypeOf(value) === Object.prototype) mask |= listedBits(bits, value);
    else {
      // `in`, as zod itself tells a present key from an absent one.
      for (let bit = 0; bit < keys.length; bit++) if (keys[bit] in value) mask |= 1 << bit;
    }
    let found = narrowed.get(mask);
    if (!found) {
      if (narrowed.size >= limit) return schema;
      found = narrow(mask);
      narrowed.set(mask, found);
    }
    return found;
  };
}
