/**
 * The hostile-input property of the chat paths (hostile_property_test.ts), held on the Responses API's paths:
 * thousands of generated malformed requests, each refused with the status the contract gives it, in OpenAI's
 * error shape (the Responses API's own), never a 500, never reaching a backend, and the gateway serving every
 * path afterwards.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { Scenario } from "./harness.ts";
import { toJsonText } from "./support/hostile_bodies.ts";
import { assertNoServerErrors, assertServesEveryPath, readFaceError } from "./support/hostile_faces.ts";
import {
  RESPONSES_CONTRACT,
  RESPONSES_PATHS,
  validResponsesBody,
} from "./support/responses_hostile_bodies.ts";
import { type ContractRequest, contractRequests, sendContractRequest } from "./support/hostile_contract.ts";

/** Fixed, so a failure names a case that reruns the same way. */
const SEED = 20_261_125;
const RUNS = 2_000;
const MAX_BODY_BYTES = 256 * 1024;

Deno.test("property: generated malformed Responses requests get a 4xx in OpenAI's shape, and harm nothing", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { maxBodyBytes: MAX_BODY_BYTES } });
  const key = await s.gw.key({ vision: true, tools: true, thinking: true });

  // The body every mutation starts from must itself be served, or the refusals below would prove nothing.
  for (const path of RESPONSES_PATHS) {
    const res = await s.gw.post(path, key, toJsonText(validResponsesBody()));
    const text = await res.text();
    assert.equal(res.status, 200, `${path}: ${text}`);
    assert.equal(JSON.parse(text).object, "response");
  }
  const acceptedBefore = s.fake().chats.length;

  const seen = new Map<string, number>();
  const count = (name: string) => seen.set(name, (seen.get(name) ?? 0) + 1);
  const labelled = contractRequests(RESPONSES_CONTRACT, MAX_BODY_BYTES).map((r) =>
    Object.assign(r, {
      [fc.toStringMethod]: () => `${r.category} on ${r.path}: ${r.label} (expected ${r.expect})`,
    }) as ContractRequest
  );
  await fc.assert(
    fc.asyncProperty(labelled, async (r) => {
      const where = `${r.category} on ${r.path}: ${r.label}`;
      // The Responses API's errors are OpenAI's, as on the chat-completions paths (format A).
      const refusal = await readFaceError(
        await sendContractRequest(s.gw.url, { Authorization: `Bearer ${key}` }, r),
        "A",
        where,
      );
      assert.equal(refusal.status, r.expect, `${where}: ${refusal.message}`);
      count(r.path);
      count(r.category);
    }),
    { seed: SEED, numRuns: RUNS },
  );

  assert.equal(s.fake().chats.length, acceptedBefore, "a malformed request reached the backend");
  assertNoServerErrors(s.gw);
  assert.ok(s.gw.usage.every((u) => u.format === "responses"));
  await assertServesEveryPath(s.gw, key);
  for (const path of RESPONSES_PATHS) {
    const res = await s.gw.post(path, key, { model: "any", input: "hello there" });
    assert.equal(res.status, 200, `${path} after the attack`);
    assert.equal((await res.json()).status, "completed");
  }

  // The spread is part of the claim: both paths and every kind of damage were exercised.
  for (const path of RESPONSES_PATHS) {
    assert.ok((seen.get(path) ?? 0) >= 500, `${path}: ${seen.get(path)} cases`);
  }
  for (
    const c of [
      "wrong-kind",
      "bad-value",
      "bad-image",
      "deep-nesting",
      "giant-array",
      "huge-string",
      "truncated",
      "control-char",
      "invalid-utf8",
      "random-bytes",
      "trailing-junk",
      "not-json",
      "not-object",
      "content-type",
      "over-limit",
    ]
  ) assert.ok((seen.get(c) ?? 0) >= 10, `${c}: ${seen.get(c) ?? 0} cases`);
});
