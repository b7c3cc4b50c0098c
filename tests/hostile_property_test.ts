import assert from "node:assert/strict";
import fc from "fast-check";
import { Scenario } from "./harness.ts";
import { toJsonText, validBody } from "./support/hostile_bodies.ts";
import {
  assertNoServerErrors,
  assertServesEveryPath,
  CHAT_PATHS,
  readFaceError,
} from "./support/hostile_faces.ts";
import { type HostileRequest, hostileRequests, send } from "./support/hostile_requests.ts";

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

  const seen = new Map<string, number>();
  const count = (name: string) => seen.set(name, (seen.get(name) ?? 0) + 1);
  const labelled = hostileRequests(MAX_BODY_BYTES).map((r) =>
    Object.assign(r, {
      [fc.toStringMethod]: () => `${r.category} on ${r.path}: ${r.label} (expected ${r.expect})`,
    }) as HostileRequest
  );
  await fc.assert(
    fc.asyncProperty(labelled, async (r) => {
      const where = `${r.category} on ${r.path}: ${r.label}`;
      const refusal = await readFaceError(await send(s.gw.url, key, r), r.face, where);
      assert.equal(refusal.status, r.expect, `${where}: ${refusal.message}`);
      count(r.path);
      count(r.category);
    }),
    { seed: SEED, numRuns: RUNS },
  );

  assert.equal(s.fake().chats.length, acceptedBefore, "a malformed request reached the backend");
  assertNoServerErrors(s.gw);
  await assertServesEveryPath(s.gw, key);

  // The spread is part of the claim: every path and every kind of damage was exercised.
  for (const { path } of CHAT_PATHS) {
    assert.ok((seen.get(path) ?? 0) >= 50, `${path}: ${seen.get(path)} cases`);
  }
  const categories = [
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
  ];
  for (const c of categories) assert.ok((seen.get(c) ?? 0) >= 5, `${c}: ${seen.get(c) ?? 0} cases`);
});
