import assert from "node:assert/strict";
import { z } from "zod";
import { arrayOf } from "./first_issue_array.ts";

Deno.test("arrayOf reports only the first bad element, however many follow", () => {
  const schema = z.object({ list: arrayOf(z.object({ n: z.number() })) });
  const items = [{ n: 1 }, { n: "two" }, ...Array(10_000).fill("junk")];
  const result = schema.safeParse({ list: items });
  assert.equal(result.success, false);
  assert.equal(result.error!.issues.length, 1);
  assert.deepEqual(result.error!.issues[0].path, ["list", 1, "n"]);
  assert.equal(result.error!.issues[0].code, "invalid_type");
});

Deno.test("arrayOf parses good elements like z.array, and keeps its minimum length", () => {
  const schema = arrayOf(z.string().transform((s) => s.toUpperCase()), 1);
  assert.deepEqual(schema.parse(["a", "b"]), ["A", "B"]);
  const empty = schema.safeParse([]);
  assert.equal(empty.error?.issues[0].code, "too_small");
  assert.equal(schema.safeParse("a").error?.issues[0].code, "invalid_type");
});
