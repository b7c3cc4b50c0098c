/**
 * @module The one usage record a Responses API request leaves, checked against the tokens its client was shown.
 */
import assert from "node:assert/strict";
import type { Scenario } from "../harness.ts";

/** The single record the request left, checked against the tokens the client was shown. */
export function assertBilledAsShown(
  s: Scenario,
  before: number,
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null | undefined,
  status: "ok" | "partial",
  stream: boolean,
): void {
  assert.equal(s.gw.usage.length, before + 1, "one usage record per request");
  const rec = s.gw.usage[before];
  assert.equal(rec.format, "responses");
  assert.equal(rec.status, status);
  assert.equal(rec.stream, stream);
  assert.ok(usage, "the client was shown its usage");
  assert.deepEqual(
    [usage.input_tokens, usage.output_tokens, usage.total_tokens],
    [rec.promptTokens, rec.completionTokens, rec.promptTokens + rec.completionTokens],
  );
}
