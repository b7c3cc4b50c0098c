/**
 * Every request head is bounded, not only a connection's first: a client that was answered once and then
 * trickles its next head is cut off at `GATEWAY_HEAD_TIMEOUT_MS`, counted from the previous answer. A trusted
 * proxy keeps its connections idle for its clients, so its next head may wait `GATEWAY_KEEPALIVE_TIMEOUT_MS`.
 */
import assert from "node:assert/strict";
import { connectTo, postOn, readUntilClosed, send } from "./support/raw_http.ts";
import { PATIENCE_MS } from "./support/wait_for.ts";
import { withGateway } from "./support/metered_gateway.ts";
import { metric } from "./support/metric_values.ts";

const CHAT = { messages: [{ role: "user", content: "hi" }] };
const HEAD_MS = 1_000;
// Idle connections could stay ten minutes: only the head bound can close the trickling one within the test.
const LIMITS = { GATEWAY_HEAD_TIMEOUT_MS: String(HEAD_MS), GATEWAY_KEEPALIVE_TIMEOUT_MS: "600000" };

Deno.test("a second request head trickled on a kept-alive connection is cut off at the head timeout", async () => {
  await withGateway(LIMITS, async ({ gateway, key, metricsUrl }) => {
    const conn = await connectTo(gateway.url);
    assert.equal((await postOn(conn, "/v1/chat/completions", key, CHAT)).status, 200);
    let sent = 0;
    const head = "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nX-Slow: " + "a".repeat(100);
    const trickle = (async () => {
      // One byte every 100 ms: the head would take 14 s.
      while (sent < head.length && await send(conn, head[sent])) {
        sent++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const { text, ms } = await readUntilClosed(conn, PATIENCE_MS);
    await trickle;
    assert.equal(text, "");
    assert.ok(ms >= HEAD_MS * 0.8, `closed too early: ${ms} ms`);
    assert.ok(sent < head.length, "the whole head was sent");
    assert.equal(await metric(metricsUrl, 'gateway_connections_closed_total{reason="idle"}'), 1);
  });
});

Deno.test("a trusted proxy's kept-alive connection outlives the head timeout between its requests", async () => {
  await withGateway({ ...LIMITS, GATEWAY_TRUST_PROXY: "127.0.0.1" }, async ({ gateway, key, metricsUrl }) => {
    const conn = await connectTo(gateway.url);
    try {
      assert.equal((await postOn(conn, "/v1/chat/completions", key, CHAT)).status, 200);
      // Idle for two and a half head timeouts (the listener sweeps once a head timeout at most).
      await new Promise((resolve) => setTimeout(resolve, HEAD_MS * 2.5));
      assert.equal((await postOn(conn, "/v1/chat/completions", key, CHAT)).status, 200);
      assert.equal(await metric(metricsUrl, 'gateway_connections_closed_total{reason="idle"}'), 0);
    } finally {
      conn.close();
    }
  });
});
