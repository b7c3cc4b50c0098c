/** The separate metrics listener: /metrics without the token there, still behind it on the public port. */
import assert from "node:assert/strict";
import { startGateway } from "./support/processes.ts";
import { freePort } from "./support/listening_ports.ts";

Deno.test("GATEWAY_METRICS_PORT serves only /metrics, without the token; the public port still asks for it", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const gateway = await startGateway({
    GATEWAY_KV: `${dir}/store.kv`,
    GATEWAY_ADMIN_TOKEN: "metrics-test-token",
    GATEWAY_METRICS_PORT: String(port),
  });
  try {
    const scrape = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(scrape.status, 200);
    assert.match(await scrape.text(), /^# HELP gateway_requests_total /m);
    for (const path of ["/admin", "/admin/status", "/v1/chat/completions"]) {
      const other = await fetch(`http://127.0.0.1:${port}${path}`);
      await other.body?.cancel();
      assert.equal(other.status, 404, path);
    }
    const publicPort = await fetch(`${gateway.url}/metrics`);
    await publicPort.body?.cancel();
    assert.equal(publicPort.status, 401);
  } finally {
    assert.equal((await gateway.stop()).code, 0);
    await Deno.remove(dir, { recursive: true });
  }
});
