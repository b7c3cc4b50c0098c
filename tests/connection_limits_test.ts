/**
 * Connections are bounded in time and in number, on the real gateway process: a request head that trickles,
 * a keep-alive connection left idle and a connection whose request was refused for its body (408, 413) are
 * closed by the gateway; run out of file descriptors, it stays up, keeps serving the connections it has,
 * says so once, and serves new ones when descriptors come back.
 */
import assert from "node:assert/strict";
import { waitFor } from "./support/chat_streams.ts";
import { connectTo, postOn, readUntilClosed, send } from "./support/raw_http.ts";
import http from "node:http";
import { PATIENCE_MS } from "./support/wait_for.ts";
import { withGateway } from "./support/metered_gateway.ts";
import { metric, waitForMetric } from "./support/metric_values.ts";

const CHAT = { messages: [{ role: "user", content: "hi" }] };

/** A chat on a new connection: its status, and its body to explain a failure. */
async function chat(url: string, key: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(CHAT),
  });
  return { status: response.status, text: await response.text() };
}

Deno.test("a request head that does not arrive in time is cut off, trickling or silent", async () => {
  await withGateway({ GATEWAY_HEAD_TIMEOUT_MS: "500" }, async ({ gateway, metricsUrl }) => {
    const silent = await connectTo(gateway.url);
    const trickling = await connectTo(gateway.url);
    let sent = 0;
    const head = "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nX-Slow: " + "a".repeat(100);
    const trickle = (async () => {
      // One byte every 100 ms: the head would take 14 s; the gateway must not wait for it.
      while (sent < head.length && await send(trickling, head[sent])) {
        sent++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const [quiet, slow] = await Promise.all([
      readUntilClosed(silent, PATIENCE_MS),
      readUntilClosed(trickling, PATIENCE_MS),
    ]);
    await trickle;
    assert.equal(quiet.text, "");
    assert.equal(slow.text, "");
    assert.ok(quiet.ms >= 400 && slow.ms >= 400, `closed too early: ${quiet.ms}, ${slow.ms} ms`);
    assert.ok(sent < head.length, "the whole head was sent");
    assert.equal(await metric(metricsUrl, 'gateway_connections_closed_total{reason="head"}'), 2);
  });
});

Deno.test("an idle keep-alive connection is closed; one in use is not", async () => {
  const idleMs = 2_000;
  await withGateway(
    { GATEWAY_KEEPALIVE_TIMEOUT_MS: String(idleMs) },
    async ({ gateway, key, metricsUrl }) => {
      // Two connections, each served once; then one is used again, after pauses of an eighth of the idle bound,
      // until the other is closed for idleness. The busy one is the older and has been open longer than the
      // bound by then, idle between its requests: only a gateway that times out idleness, not age, keeps it.
      const busy = await connectTo(gateway.url);
      const idle = await connectTo(gateway.url);
      assert.equal((await postOn(busy, "/v1/chat/completions", key, CHAT)).status, 200);
      assert.equal((await postOn(idle, "/v1/chat/completions", key, CHAT)).status, 200);
      let idleClosed = false;
      const closing = readUntilClosed(idle, PATIENCE_MS).finally(() => idleClosed = true);
      for (let served = 1; !idleClosed && served < 1_000; served++) {
        await new Promise((resolve) => setTimeout(resolve, idleMs / 8));
        assert.equal(
          (await postOn(busy, "/v1/chat/completions", key, CHAT)).status,
          200,
          `request ${served + 1}`,
        );
      }
      const { text, ms } = await closing;
      assert.equal(text, "");
      // A lower bound only: a loaded machine closes it later, never sooner.
      assert.ok(ms >= idleMs / 2, `closed ${ms} ms after its request`);
      assert.equal(
        (await postOn(busy, "/v1/chat/completions", key, CHAT)).status,
        200,
        "the busy one still serves",
      );
      assert.equal(await metric(metricsUrl, 'gateway_connections_closed_total{reason="idle"}'), 1);
      busy.close();
    },
  );
});

Deno.test("a refused body (413 declared too large, 408 too slow) closes its connection while the client still sends", async () => {
  await withGateway({ GATEWAY_BODY_TIMEOUT_MS: "300" }, async ({ gateway, key }) => {
    for (const [status, length] of [[413, 10 * 1024 ** 3], [408, 1000]]) {
      const conn = await connectTo(gateway.url);
      await send(
        conn,
        `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n` +
          `Authorization: Bearer ${key}\r\nContent-Length: ${length}\r\n\r\n{`,
      );
      // A space every 50 ms, 600 at most: the body never completes, and the client is still sending when the
      // gateway closes, however slow the machine.
      let sending = true;
      let spaces = 0;
      const trickle = (async () => {
        for (; spaces < 600 && sending && await send(conn, " "); spaces++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const { text } = await readUntilClosed(conn, PATIENCE_MS);
      const sentBeforeClose = spaces;
      sending = false;
      await trickle;
      assert.match(text, new RegExp(`^HTTP/1.1 ${status} `), text);
      assert.ok(sentBeforeClose < 600, `${status}: closed only after the client had stopped sending`);
    }
  });
});

Deno.test("a body refused while still uploading (413) reaches the client: fetch sends 20 MB, ten times", async () => {
  await withGateway({ GATEWAY_MAX_BODY_BYTES: String(20 * 1024 * 1024 - 4096) }, async ({ gateway, key }) => {
    const body = JSON.stringify({ ...CHAT, pad: "x".repeat(20 * 1024 * 1024) });
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      try {
        const response = await fetch(`${gateway.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
          body,
        });
        seen.push(`${response.status} ${(await response.json()).error?.code}`);
      } catch (error) {
        // Closing a connection whose upload is unread resets it, and the client loses the answer it was sent.
        seen.push(`lost: ${(error as Error).message.slice(0, 80)}`);
      }
    }
    assert.deepEqual(seen, Array(10).fill("413 payload_too_large"));
  });
});

/** A chat sent from another loopback address (127.0.0.2), as a second client machine would send it. */
function chatFrom(localAddress: string, url: string, key: string): Promise<number> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify(CHAT);
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: hostname,
      port,
      path: "/v1/chat/completions",
      method: "POST",
      localAddress,
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    request.on("error", reject);
    request.end(body);
  });
}

Deno.test("4,096 idle connections from one address take no place from another: it is answered while they stay open", async () => {
  // Idle connections live 10 minutes here: without a limit per address they would hold every place that long.
  const env = { GATEWAY_KEEPALIVE_TIMEOUT_MS: "600000", GATEWAY_HEAD_TIMEOUT_MS: "600000" };
  await withGateway(env, async ({ gateway, key, metricsUrl }) => {
    const { hostname, port } = new URL(gateway.url);
    const flood: Deno.TcpConn[] = [];
    try {
      for (let i = 0; i < 4_096; i++) {
        const conn = await Deno.connect({ hostname, port: Number(port) });
        flood.push(conn);
        // One request each, so every connection is a served, idle one, as a client's keep-alive pool holds.
        await send(conn, "GET / HTTP/1.1\r\nHost: gateway\r\n\r\n").catch(() => false);
      }
      const closed = await waitForMetric(
        metricsUrl,
        'gateway_connections_closed_total{reason="address"}',
        (n) => n === 4_096 - 512,
      );
      assert.equal(closed, 4_096 - 512, "every connection over the address's 512 was closed at once");
      const started = performance.now();
      const status = await chatFrom("127.0.0.2", gateway.url, key);
      console.log(`another address answered in ${Math.round(performance.now() - started)} ms`);
      assert.equal(status, 200);
      assert.equal(
        await metric(metricsUrl, 'gateway_connections_closed_total{reason="address"}'),
        4_096 - 512,
        "the second address was not counted with the first",
      );
    } finally {
      for (const conn of flood) {
        try {
          conn.close();
        } catch { /* closed by the gateway */ }
      }
    }
  });
});

Deno.test("a trusted proxy carries many clients: its connections have no limit per address", async () => {
  const env = { GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: "8", GATEWAY_TRUST_PROXY: "127.0.0.1" };
  await withGateway(env, async ({ gateway, key, metricsUrl }) => {
    const conns = await idleConnections(gateway.url, 20);
    try {
      // Each of the 20 is served, the last ones included.
      for (const conn of conns) {
        const { status } = await postOn(conn, "/v1/chat/completions", key, CHAT);
        assert.equal(status, 200);
      }
      assert.equal(await metric(metricsUrl, 'gateway_connections_closed_total{reason="address"}'), 0);
    } finally {
      closeAll(conns);
    }
  });
});

/** Opens `n` connections that send nothing; those beyond what the gateway accepts wait in its backlog. */
async function idleConnections(url: string, n: number): Promise<Deno.TcpConn[]> {
  const conns: Deno.TcpConn[] = [];
  for (let i = 0; i < n; i++) conns.push(await connectTo(url));
  return conns;
}

const closeAll = (conns: Deno.Conn[]) => conns.forEach((c) => c.close());

Deno.test("out of descriptors under ulimit -n 256: alive, serving what it has, said once, back after, then held below", async () => {
  // A connection limit far above what 256 descriptors allow, so that they really run out.
  const env = { GATEWAY_MAX_CONNECTIONS: "100000", GATEWAY_HEAD_TIMEOUT_MS: "60000" };
  await withGateway(env, async ({ gateway, key, metricsUrl }) => {
    const kept = await connectTo(gateway.url);
    // Also warms the gateway's pooled connection to the backend, which is all a request needs from now on.
    assert.equal((await postOn(kept, "/v1/chat/completions", key, CHAT)).status, 200);
    let idle = await idleConnections(gateway.url, 300);
    try {
      await waitFor("the gateway to run out", () => gateway.output().includes("cannot accept connections"));
      assert.equal((await postOn(kept, "/v1/chat/completions", key, CHAT)).status, 200);
    } finally {
      closeAll(idle);
    }
    const answer = await chat(gateway.url, key);
    assert.equal(answer.status, 200, answer.text);
    await waitFor(
      "the recovery to be logged",
      () => gateway.output().includes("accepting connections again"),
    );
    assert.equal(gateway.output().split("cannot accept connections").length - 1, 1, "said more than once");
    const failures = await metric(metricsUrl, "gateway_accept_failures_total");
    assert.ok(failures > 0);

    // The limit it learned keeps descriptors free: the next flood waits at it instead of running out.
    const limit = await metric(metricsUrl, "gateway_connections_limit");
    assert.ok(limit >= 16 && limit < 256, `learned limit ${limit}`);
    idle = await idleConnections(gateway.url, 300);
    try {
      assert.equal(await waitForMetric(metricsUrl, "gateway_connections_open", (n) => n >= limit), limit);
      assert.equal((await postOn(kept, "/v1/chat/completions", key, CHAT)).status, 200);
      assert.equal(await metric(metricsUrl, "gateway_accept_failures_total"), failures);
    } finally {
      closeAll(idle);
    }
    const again = await chat(gateway.url, key);
    assert.equal(again.status, 200, again.text);
    kept.close();
    assert.equal(gateway.output().split("cannot accept connections").length - 1, 1, "said more than once");
  }, 256);
});

Deno.test("at GATEWAY_MAX_CONNECTIONS new connections wait, and are taken once others close", async () => {
  await withGateway({ GATEWAY_MAX_CONNECTIONS: "20", GATEWAY_HEAD_TIMEOUT_MS: "60000" }, async (setup) => {
    const { gateway, key, metricsUrl } = setup;
    const kept = await connectTo(gateway.url);
    assert.equal((await postOn(kept, "/v1/chat/completions", key, CHAT)).status, 200);
    const idle = await idleConnections(gateway.url, 40);
    let waiting: Promise<{ status: number; text: string }> | undefined;
    try {
      assert.equal(await waitForMetric(metricsUrl, "gateway_connections_open", (n) => n >= 20), 20);
      assert.ok(await metric(metricsUrl, "gateway_connection_waits_total") >= 1);
      assert.equal((await postOn(kept, "/v1/chat/completions", key, CHAT)).status, 200);
      waiting = chat(gateway.url, key);
      const settled = await Promise.race([
        waiting.then(() => true),
        new Promise((r) => setTimeout(r, 300, false)),
      ]);
      assert.equal(settled, false, "a connection beyond the limit was served");
    } finally {
      closeAll(idle);
    }
    const answer = await waiting!;
    assert.equal(answer.status, 200, answer.text);
    kept.close();
  });
});
