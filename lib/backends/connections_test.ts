import assert from "node:assert/strict";
import type { Dispatcher } from "undici";
import { Connections } from "./connections.ts";

/** A server that notes the client port of every request: one port per connection. */
function peerServer() {
  const peers = new Set<number>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (_req, info) => {
    peers.add(info.remoteAddr.port);
    return new Response("ok");
  });
  return { peers, server, origin: `http://127.0.0.1:${server.addr.port}` };
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

/** One call's outcome once its body has ended: its status, or the error undici reported. */
function call(
  connections: Connections,
  origin: string,
  headers: Record<string, string>,
): Promise<number | Error> {
  return new Promise((resolve) => {
    let status = 0;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart() {},
      onResponseStart(_c, code) {
        status = code;
      },
      onResponseData() {},
      onResponseEnd() {
        resolve(status);
      },
      onResponseError(_c, error) {
        resolve(error);
      },
    };
    connections.dispatch({ origin, path: "/", method: "POST", headers, body: "{}" }, handler);
  });
}

Deno.test("calls one after another share one connection; calls at once open one each, kept for the next", async () => {
  const { peers, server, origin } = peerServer();
  const connections = new Connections({});
  try {
    // A client is free again once its drain has come, a turn after the call ended (as with undici's Pool).
    for (let i = 0; i < 5; i++) {
      assert.equal(await call(connections, origin, {}), 200);
      await turn();
    }
    assert.equal(peers.size, 1, "one after another: one connection");
    assert.deepEqual(await Promise.all(Array.from({ length: 4 }, () => call(connections, origin, {}))), [
      200,
      200,
      200,
      200,
    ]);
    await turn();
    const afterBurst = peers.size;
    assert.ok(afterBurst >= 2 && afterBurst <= 4, `four at once: up to four connections (${afterBurst})`);
    await Promise.all(Array.from({ length: 4 }, () => call(connections, origin, {})));
    assert.equal(peers.size, afterBurst, "the next burst reuses them");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a call refused at once does not take its client out of use", async () => {
  const { peers, server, origin } = peerServer();
  const connections = new Connections({});
  try {
    assert.equal(await call(connections, origin, {}), 200);
    await turn();
    for (let i = 0; i < 20; i++) {
      const refused = await call(connections, origin, { authorization: "Bearer a\nb" });
      assert.ok(refused instanceof Error, "a header undici rejects fails the call");
      await turn();
    }
    assert.equal(await call(connections, origin, {}), 200);
    assert.equal(peers.size, 1, "the same client served before and after the refusals");
  } finally {
    await server.shutdown();
  }
});
