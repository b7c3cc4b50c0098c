import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { ChatBody, MessageBody } from "./chat_body.ts";
import { narrowedByKeys } from "./narrowed_object.ts";

/** Same success, same output, same issues as the whole schema. */
function assertSameParse(schema: z.ZodType, narrowed: z.ZodType, value: unknown) {
  const whole = schema.safeParse(value);
  const part = narrowed.safeParse(value);
  assert.equal(part.success, whole.success, JSON.stringify(value));
  if (whole.success) assert.deepEqual(part.data, whole.data);
  else assert.deepEqual(part.error!.issues, whole.error.issues);
}

/** Values of every kind, and for some keys values their schema takes. */
const someValue = fc.oneof(
  fc.anything(),
  fc.constantFrom("m1", "hi", true, false, null, 0, 1, 2.5, -1, 8, [], {}, "5m", "json"),
  fc.constantFrom([{ role: "user", content: "hi" }], { temperature: 0.2, num_predict: 8 }),
  fc.constantFrom({ include_usage: true }, { type: "json_object" }, "auto", "high"),
);

function bodies(keys: string[]) {
  return fc.oneof(
    fc.dictionary(fc.constantFrom(...keys, "extra", "toString"), someValue, { maxKeys: 8 }),
    fc.anything(),
  );
}

/** Enough sets of keys that every run parses with a narrowed schema, not the whole one past the limit. */
const UNLIMITED = 1_000_000;

for (const [name, schema] of [["chat body", ChatBody], ["message", MessageBody]] as const) {
  Deno.test(`a ${name} parses with its narrowed schema exactly as with the whole one`, () => {
    const narrow = narrowedByKeys(schema as z.ZodObject<z.ZodRawShape>, UNLIMITED);
    fc.assert(
      fc.property(bodies(Object.keys(schema.shape)), (value) => {
        assertSameParse(schema, narrow(value), value);
      }),
      { numRuns: 3_000 },
    );
  });
}

Deno.test("a narrowed schema parses only the keys present, and those that are not optional", () => {
  const narrow = narrowedByKeys(ChatBody);
  const keys = (s: z.ZodType) => Object.keys((s as z.ZodObject<z.ZodRawShape>).shape);
  assert.deepEqual(keys(narrow({ model: "m", stream: true })), ["model", "messages", "stream"]);
  assert.deepEqual(keys(narrow({})), ["messages"]);
  // The same set of keys gets the same schema; a value that is not an object, the whole one.
  assert.equal(narrow({ stream: true, model: "x" }), narrow({ model: "m", stream: false }));
  assert.equal(narrow("text"), ChatBody);
  assert.equal(narrow(null), ChatBody);
});

Deno.test("keys with a default are always parsed, and past the limit the whole schema is used", () => {
  const schema = z.object({ a: z.string().optional(), b: z.number().default(3), c: z.boolean().optional() });
  const narrow = narrowedByKeys(schema, 2);
  assert.deepEqual(narrow({}).parse({}), { b: 3 });
  assertSameParse(schema, narrow({ a: "x" }), { a: "x" });
  // Two sets are kept; a third is parsed whole, and still right.
  assert.equal(narrow({ c: true }), schema);
  assertSameParse(schema, narrow({ c: true }), { c: true });
  assert.notEqual(narrow({ a: "y" }), schema);
});

Deno.test("an object with refinements is parsed whole", () => {
  const schema = z.object({ a: z.string().optional() }).refine((o) => o.a !== "no");
  const narrow = narrowedByKeys(schema as unknown as z.ZodObject<z.ZodRawShape>);
  assert.equal(narrow({ a: "x" }), schema);
});

Deno.test("keys are found as zod finds them, whatever the object's prototype", () => {
  const schema = z.object({ a: z.string().optional(), b: z.number().optional() });
  const narrow = narrowedByKeys(schema, UNLIMITED);
  const keys = (s: z.ZodType) => Object.keys((s as z.ZodObject<z.ZodRawShape>).shape);
  const bare = Object.assign(Object.create(null), { b: 1 });
  const inherited = Object.create({ a: "from the prototype" });
  const unlisted = Object.create(Object.defineProperty({}, "a", { value: 7, enumerable: false }));
  assert.deepEqual(keys(narrow(bare)), ["b"]);
  assert.deepEqual(keys(narrow(inherited)), ["a"]);
  assert.deepEqual(keys(narrow(unlisted)), ["a"]);
  for (const value of [bare, inherited, unlisted, { a: "x", extra: 1 }]) {
    assertSameParse(schema, narrow(value), value);
  }
  // A key every object inherits is found by `in` on any object, listed or not: such a schema looks each up.
  const named = z.object({ toString: z.string().optional(), a: z.string().optional() });
  const narrowNamed = narrowedByKeys(named, UNLIMITED);
  assert.deepEqual(keys(narrowNamed({ a: "x" })), ["toString", "a"]);
  for (const value of [{}, { a: "x" }, { toString: "y" }]) assertSameParse(named, narrowNamed(value), value);
});
