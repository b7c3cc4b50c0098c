import assert from "node:assert/strict";
import { Scenario } from "./harness.ts";
import { toJsonText, validBody } from "./support/hostile_bodies.ts";
import {
  assertNoServerErrors,
  assertServesEveryPath,
  CHAT_PATHS,
  readFaceError,
} from "./support/hostile_faces.ts";
import { assertEveryRefused, RefusalSpread } from "./support/refusal_runs.ts";
import { hostileRequests, send } from "./support/hostile_requests.ts";

/** Fixed, so a failure names a case that reruns the same way. */
const SEED = 20_261_122;
const RUNS = 600;
const MAX_BODY_BYTES = 256 * 1024;

Deno.test("property: generated malformed requests get a 4xx in their path's format, and harm nothing", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { maxBodyBytes: MAX_BODY_BYTES } });
  const key = await s.gw.key({ vision: true, tools: true, thinking: true });

  // The body every mutation starts from must itself be accepted, or the refusals below would prove nothing.
  for (const { path } of CHAT_PATHS) {
    const res = await s.gw.post(path, key, toJsonText(validBody()));
    assert.equal(res.status, 200, `${path}: ${await res.text()}`);
  }
  const acceptedBefore = s.fake().chats.length;

  const spread = new RefusalSpread();
  await assertEveryRefused(
    hostileRequests(MAX_BODY_BYTES),
    { seed: SEED, numRuns: RUNS },
    spread,
    async (r, where) => readFaceError(await send(s.gw.url, key, r), r.face, where),
  );

  assert.equal(s.fake().chats.length, acceptedBefore, "a malformed request reached the backend");
  assertNoServerErrors(s.gw);
  await assertServesEveryPath(s.gw, key);

  // The spread is part of the claim: every path and every kind of damage was exercised.
  spread.assertPaths(CHAT_PATHS.map((p) => p.path), 50);
  spread.assertCategories(5);
});
