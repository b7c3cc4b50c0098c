/**
 * A page on a wrong origin that keeps calling a public web key: every request is refused (403) and counted, and
 * the ledger writes a handful of rows a minute for it instead of one per request.
 */
import assert from "node:assert/strict";
import { TestGateway, USER_HELLO } from "./harness.ts";
import { listUsage } from "../lib/usage/mod.ts";

const REQUESTS = 50_000;
const CONNECTIONS = 32;

Deno.test(`${REQUESTS} wrong-origin requests write at most 10 rows per key and minute, counting every one`, async () => {
  const gw = await TestGateway.start();
  try {
    const secret = await gw.key({ allowDomains: ["app.example.com"], rpm: 5 });
    const body = JSON.stringify({ model: "m1", messages: USER_HELLO });
    const headers = {
      "Content-Type": "application/json",
      Authorization: `Bearer ${secret}`,
      Origin: "https://evil.example.net",
    };
    const statuses = new Map<number, number>();
    let sent = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (sent < REQUESTS) {
        sent++;
        const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers, body });
        await res.body?.cancel();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }));
    const minutes = Math.ceil((performance.now() - started) / 60_000);
    assert.deepEqual([...statuses], [[403, REQUESTS]], "every request refused for its origin");
    assert.equal(gw.usage.length, REQUESTS, "the pipeline reported every one");
    // The last minute's folded rows are written as the ledger closes, as at a stop.
    await gw.ledger.close();
    const rows = await listUsage(gw.kv, { limit: 10_000 });
    const counted = rows.reduce((n, row) => n + (row.count ?? 1), 0);
    assert.equal(counted, REQUESTS, "the rows count every refusal");
    // A fold window can straddle a clock minute: at most 6 rows per window of 60 s.
    assert.ok(rows.length <= 10 * minutes, `${rows.length} rows in ${minutes} minute(s)`);
    assert.ok(rows.every((row) => row.status === "rejected" && row.httpStatus === 403));
  } finally {
    await gw.close();
  }
});
