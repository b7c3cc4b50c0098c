/**
 * The hostile-input property of the chat paths (hostile_property_test.ts), held on Anthropic's Messages API:
 * thousands of generated malformed requests on /v1/messages and its mirror, each refused with the status the
 * contract gives it, in Anthropic's error shape, never a 500, never reaching a backend; the same damage on
 * count_tokens, which parses with the same face; and every path serving afterwards.
 */
import assert from "node:assert/strict";
import { Scenario } from "./harness.ts";
import { toJsonText } from "./support/hostile_bodies.ts";
import { assertNoServerErrors, readFaceError } from "./support/hostile_faces.ts";
import { ANTHROPIC_CONTRACT, validMessagesBody } from "./support/anthropic_hostile_bodies.ts";
import { type ContractRequest, contractRequests, sendContractRequest } from "./support/hostile_contract.ts";
import { assertEveryRefused, RefusalSpread } from "./support/refusal_runs.ts";

/** Fixed, so a failure names a case that reruns the same way. */
const SEED = 20_261_126;
const RUNS = 2_000;
const COUNT_RUNS = 300;
const MAX_BODY_BYTES = 256 * 1024;
const COUNT_PATHS = ["/v1/messages/count_tokens", "/api/v1/messages/count_tokens"] as const;

Deno.test("property: generated malformed Messages requests get a 4xx in Anthropic's shape, and harm nothing", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { maxBodyBytes: MAX_BODY_BYTES } });
  const key = await s.gw.key({ vision: true, tools: true, thinking: true });
  // Half the cases present the key as Anthropic's clients do, half as a bearer token.
  const keyHeaders: Record<string, string>[] = [{ "x-api-key": key }, { Authorization: `Bearer ${key}` }];

  // The body every mutation starts from must itself be served, or the refusals below would prove nothing.
  for (const path of [...ANTHROPIC_CONTRACT.paths, ...COUNT_PATHS]) {
    const res = await s.gw.post(path, key, toJsonText(validMessagesBody()));
    assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
    const body = await res.json();
    assert.ok(body.type === "message" || body.estimated === true, path);
  }
  const acceptedBefore = s.fake().chats.length;
  const recordsBefore = s.gw.usage.length;

  const spread = new RefusalSpread();
  let sent = 0;
  const refuse = async (r: ContractRequest, where: string) =>
    readFaceError(await sendContractRequest(s.gw.url, keyHeaders[sent++ % 2], r), "anthropic", where);
  const onMessages = contractRequests(ANTHROPIC_CONTRACT, MAX_BODY_BYTES);
  await assertEveryRefused(onMessages, { seed: SEED, numRuns: RUNS }, spread, refuse);
  const onCount = contractRequests({ ...ANTHROPIC_CONTRACT, paths: COUNT_PATHS }, MAX_BODY_BYTES);
  await assertEveryRefused(onCount, { seed: SEED, numRuns: COUNT_RUNS }, spread, refuse);

  assert.equal(s.fake().chats.length, acceptedBefore, "a malformed request reached the backend");
  assertNoServerErrors(s.gw);
  const records = s.gw.usage.slice(recordsBefore);
  assert.ok(records.every((u) => u.format === "anthropic" && u.status === "rejected"));
  // One record per refused Messages request; count_tokens, like discovery, records nothing.
  const messagesRuns = ANTHROPIC_CONTRACT.paths.reduce((n, p) => n + spread.of(p), 0);
  assert.equal(messagesRuns, RUNS);
  assert.equal(records.length, RUNS);

  for (const path of ANTHROPIC_CONTRACT.paths) {
    const res = await s.gw.post(path, key, { max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
    assert.equal(res.status, 200, `${path} after the attack`);
    assert.equal((await res.json()).type, "message");
  }

  // The spread is part of the claim: every path and every kind of damage was exercised.
  spread.assertPaths(ANTHROPIC_CONTRACT.paths, 800);
  spread.assertPaths(COUNT_PATHS, 100);
  spread.assertCategories(20);
});
