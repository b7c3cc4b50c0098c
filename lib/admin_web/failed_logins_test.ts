/** @module Failed admin logins: one audit entry and two lines per address, way in and minute, whatever the flood. */
import assert from "node:assert/strict";
import { listAudit } from "../audit/mod.ts";
import { FailedLogins } from "./failed_logins.ts";

Deno.test("a minute's failures from one address are one entry, rewritten with its counts when the minute is over", async () => {
  using kv = await Deno.openKv(":memory:");
  let now = Date.parse("2026-11-25T10:00:00Z");
  const lines: string[] = [];
  const counted: string[] = [];
  const failures = new FailedLogins({
    kv,
    now: () => now,
    log: (line) => lines.push(line),
    count: (via, reason) => counted.push(`${via} ${reason}`),
  });
  failures.note("192.0.2.1", "bearer", "wrong_token");
  now += 10_000;
  for (let i = 0; i < 500; i++) failures.note("192.0.2.1", "bearer", i < 4 ? "wrong_token" : "throttled");
  now += 51_000;
  failures.note("192.0.2.1", "bearer", "wrong_token");
  await failures.close();

  const records = await listAudit(kv);
  assert.deepEqual(records.map((r) => [r.time, r.actor, r.action, r.changes]), [
    ["2026-11-25T10:01:01.000Z", { kind: "api", address: "192.0.2.1" }, "admin.login_failed", {
      failures: { after: 1 },
    }],
    ["2026-11-25T10:00:00.000Z", { kind: "api", address: "192.0.2.1" }, "admin.login_failed", {
      failures: { after: 5 },
      throttled: { after: 496 },
    }],
  ]);
  assert.equal(lines.length, 3, lines.join("\n"));
  assert.match(
    lines[1],
    /^admin: 5 failed and 496 throttled authentication attempts \(bearer\) from 192\.0\.2\.1/,
  );
  assert.equal(counted.length, 502, "every attempt is counted for the metrics");
});

Deno.test("beyond 1,000 addresses in a minute the rest share one entry", async () => {
  using kv = await Deno.openKv(":memory:");
  const failures = new FailedLogins({ kv, now: () => 0, log: () => {} });
  for (let i = 0; i < 1_200; i++) failures.note(`10.0.${i >> 8}.${i & 255}`, "form", "wrong_token");
  await failures.close();
  const records = await listAudit(kv, { limit: 2_000 });
  assert.equal(records.length, 1_001);
  const shared = records.find((r) => r.actor.address === "*");
  assert.deepEqual(shared?.changes, { failures: { after: 200 } });
  assert.equal(shared?.actor.kind, "page");
});
