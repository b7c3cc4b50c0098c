/**
 * The metrics port against DNS rebinding: a page of another site that made the browser resolve its own name to
 * the gateway's address still sends that name in `Host`, and gets 421 with nothing of the metrics.
 */
import assert from "node:assert/strict";
import { serveMetrics } from "../lib/server/metrics_server.ts";
import { TestGateway } from "./harness.ts";
import { connectTo, readUntilClosed, send } from "./support/raw_http.ts";

/** One GET /metrics with the given Host line (none when null), on its own connection. */
async function scrape(url: string, host: string | null): Promise<{ status: number; text: string }> {
  const conn = await connectTo(url);
  const hostLine = host === null ? "" : `Host: ${host}\r\n`;
  assert.ok(await send(conn, `GET /metrics HTTP/1.1\r\n${hostLine}Connection: close\r\n\r\n`));
  const { text } = await readUntilClosed(conn, 10_000);
  return { status: Number(text.slice(9, 12)), text };
}

Deno.test("the metrics port answers addresses, localhost and listed names, and 421 to any other Host", async () => {
  const gw = await TestGateway.start();
  const listening = serveMetrics({
    ...gw.deps,
    config: { ...gw.deps.config, metricsPort: 0, metricsHostnames: ["metrics.internal"] },
  });
  assert.ok(listening);
  try {
    const url = `http://127.0.0.1:${listening.addr.port}`;
    const port = listening.addr.port;
    for (
      const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "metrics.internal", null]
    ) {
      const { status, text } = await scrape(url, host);
      assert.equal(status, 200, String(host));
      assert.match(text, /# HELP gateway_requests_total /, String(host));
    }
    for (
      const host of [
        `evil.example:${port}`,
        "evil.example",
        `127.0.0.1.nip.io:${port}`,
        "metrics.internal.evil",
      ]
    ) {
      const { status, text } = await scrape(url, host);
      assert.equal(status, 421, host);
      assert.match(text, /"code":"misdirected_request"/, host);
      assert.doesNotMatch(text, /gateway_requests_total/, host);
    }
  } finally {
    listening.close();
    await gw.close();
  }
});
