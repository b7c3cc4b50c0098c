/**
 * The hostile-input property of the chat paths (hostile_property_test.ts), held on the Responses API's paths:
 * thousands of generated malformed requests, each refused with the status the contract gives it, in OpenAI's
 * error shape (the Responses API's own), never a 500, never reaching a backend, and the gateway serving every
 * path afterwards.
 */
import assert from "node:assert/strict";
import { Scenario } from "./harness.ts";
import { toJsonText } from "./support/hostile_bodies.ts";
import { assertNoServerErrors, assertServesEveryPath, readFaceError } from "./support/hostile_faces.ts";
import {
  RESPONSES_CONTRACT,
  RESPONSES_PATHS,
  validResponsesBody,
} from "./support/responses_hostile_bodies.ts";
import { contractRequests, sendContractRequest } from "./support/hostile_contract.ts";
import { assertEveryRefused, RefusalSpread } from "./support/refusal_runs.ts";

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

  const spread = new RefusalSpread();
  await assertEveryRefused(
    contractRequests(RESPONSES_CONTRACT, MAX_BODY_BYTES),
    { seed: SEED, numRuns: RUNS },
    spread,
    // The Responses API's errors are OpenAI's, as on the chat-completions paths (format A).
    async (r, where) =>
      readFaceError(await sendContractRequest(s.gw.url, { Authorization: `Bearer ${key}` }, r), "A", where),
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
  spread.assertPaths(RESPONSES_PATHS, 500);
  spread.assertCategories(10);
});
