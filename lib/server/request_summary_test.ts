import assert from "node:assert/strict";
import { log } from "../log/mod.ts";
import { RequestSummary } from "./request_summary.ts";
import type { UsageRecord } from "../usage/types.ts";

const record = (status: UsageRecord["status"], httpStatus: number, errorCode?: string): UsageRecord => ({
  time: new Date().toISOString(),
  format: "openai",
  stream: false,
  status,
  httpStatus,
  errorCode,
  promptTokens: 0,
  completionTokens: 0,
  tokenSource: "estimate",
  latencyMs: 1,
});

Deno.test("request summary: one line for what was refused and failed, by code; nothing when all went well", () => {
  const lines: string[] = [];
  log.configure({ format: "json", write: (line) => lines.push(line) });
  const summary = new RequestSummary(3_600_000);
  try {
    summary.see(record("ok", 200));
    summary.flush();
    assert.deepEqual(lines, []);
    for (let i = 0; i < 3; i++) summary.see(record("rejected", 429, "rate_limited"));
    summary.see(record("rejected", 401, "invalid_api_key"));
    summary.see(record("error", 503, "no_healthy_server"));
    summary.see(record("partial", 200, "client_closed"));
    summary.flush();
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]);
    assert.equal(line.event, "requests.summary");
    assert.equal(line.level, "warn");
    assert.equal(line.refused, 4);
    assert.equal(line.failed, 2);
    assert.equal(line.refusedCodes, "rate_limited=3 invalid_api_key=1");
    assert.equal(line.failedCodes, "no_healthy_server=1 partial:client_closed=1");
    summary.flush();
    assert.equal(lines.length, 1, "counted afresh after each line");
  } finally {
    summary.close();
    log.configure({ format: "text", write: (line) => console.error(line) });
  }
});
