import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Exchange, ExchangeHandler } from "./backend_connection.ts";
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

const REQUEST = Buffer.from("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}");

interface Outcome {
  status: number;
  body: string;
  error?: Error;
}

/** One call's outcome once its body has ended or it failed. */
function call(connections: Connections, origin: string, request: Uint8Array = REQUEST): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = { status: 0, body: "" };
    const handler: ExchangeHandler = {
      onStart(_exchange: Exchange) {},
      onHead(status) {
        outcome.status = status;
      },
      onData(bytes, start, end) {
        outcome.body += new TextDecoder().decode(bytes.subarray(start, end));
      },
      onEnd() {
        resolve(outcome);
      },
      onError(error) {
        resolve({ ...outcome, error });
      },
    };
    connections.dispatch(origin, request, handler);
  });
}

/**
 * A raw TCP server: `answer` gets each connection's number and every request read on it, and says what to
 * write back (or `undefined` to close the connection; it closes too after a reply saying `connection: close`).
 * Counts the connections.
 */
function rawServer(answer: (connection: number, request: number) => string | undefined) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const state = { connections: 0 };
  const open = new Set<Deno.Conn>();
  (async () => {
    for await (const conn of listener) {
      const n = ++state.connections;
      open.add(conn);
      (async () => {
        const buffer = new Uint8Array(65536);
        let requests = 0;
        try {
          for (;;) {
            const read = await conn.read(buffer);
            if (read === null) break;
            const reply = answer(n, ++requests);
            if (reply === undefined) break;
            await conn.write(new TextEncoder().encode(reply));
            if (reply.includes("connection: close")) break;
          }
        } catch {
          // The client went.
        }
        open.delete(conn);
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      })();
    }
  })().catch(() => {});
  return {
    origin: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    state,
    close() {
      listener.close();
      for (const conn of open) conn.close();
    },
  };
}

const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("calls one after another share one connection; calls at once open one each, kept for the next", async () => {
  const { peers, server, origin } = peerServer();
  const connections = new Connections();
  try {
    for (let i = 0; i < 5; i++) assert.equal((await call(connections, origin)).status, 200);
    assert.equal(peers.size, 1, "one after another: one connection");
    const burst = await Promise.all(Array.from({ length: 4 }, () => call(connections, origin)));
    assert.deepEqual(burst.map((o) => o.status), [200, 200, 200, 200]);
    assert.equal(peers.size, 4, "four at once: four connections (one was free, three opened)");
    await Promise.all(Array.from({ length: 4 }, () => call(connections, origin)));
    assert.equal(peers.size, 4, "the next burst reuses them");
  } finally {
    connections.closeIdle();
    await server.shutdown();
  }
});

Deno.test("answers framed every way arrive whole: by length, chunked, to the close, after a 100 Continue", async () => {
  const replies = [
    ok("sized"),
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nchu\r\n5\r\nnked!\r\n0\r\n\r\n",
    "HTTP/1.1 100 Continue\r\n\r\n" + ok("after 100"),
    "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nto the close",
  ];
  const server = rawServer((_c, r) => replies[r - 1]);
  const connections = new Connections();
  try {
    assert.deepEqual(await call(connections, server.origin), { status: 200, body: "sized" });
    assert.deepEqual(await call(connections, server.origin), { status: 200, body: "chunked!" });
    assert.deepEqual(await call(connections, server.origin), { status: 200, body: "after 100" });
    const last = call(connections, server.origin);
    // The server closes after writing: the answer ends with the connection.
    assert.deepEqual(await last, { status: 200, body: "to the close" });
    assert.equal(server.state.connections, 1);
  } finally {
    connections.closeIdle();
    server.close();
  }
});

Deno.test("a connection whose answer came with stray bytes after it is not used again", async () => {
  // The first answer is followed by the start of another nobody asked for: a later call on that connection
  // would take those bytes for its own answer.
  const server = rawServer((c) => c === 1 ? ok("first") + "HTTP/1.1 200 OK\r\ncontent-le" : ok("second"));
  const connections = new Connections();
  try {
    assert.deepEqual(await call(connections, server.origin), { status: 200, body: "first" });
    assert.deepEqual(await call(connections, server.origin), { status: 200, body: "second" });
    assert.equal(server.state.connections, 2, "the second call went on a new connection");
  } finally {
    connections.closeIdle();
    server.close();
  }
});

Deno.test("a kept connection the backend closes while idle is not used again", async () => {
  // Each connection answers once and closes a little later, without saying so.
  const server = rawServer((_c, r) => r === 1 ? ok("once") : undefined);
  const connections = new Connections();
  try {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await call(connections, server.origin), { status: 200, body: "once" });
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    assert.equal(server.state.connections, 3);
  } finally {
    connections.closeIdle();
    server.close();
  }
});

Deno.test("a call on a kept connection the backend closed unread goes again on a new one, once", async () => {
  // The second request on every connection is not read: the connection closes under it, as a backend closing
  // an idle connection at that moment does.
  const server = rawServer((_c, r) => r === 1 ? ok("answered") : undefined);
  const connections = new Connections();
  try {
    assert.deepEqual(await call(connections, server.origin), { status: 200, body: "answered" });
    assert.deepEqual(await call(connections, server.origin), { status: 200, body: "answered" });
    assert.equal(server.state.connections, 2, "sent again on a second connection");
    // A new connection closed under its first call is the backend's fault: no second try.
    const refusing = rawServer(() => undefined);
    try {
      const outcome = await call(connections, refusing.origin);
      assert.ok(outcome.error, "the call fails");
      assert.equal(refusing.state.connections, 1);
    } finally {
      refusing.close();
    }
  } finally {
    connections.closeIdle();
    server.close();
  }
});

Deno.test("an answer that came before its request was all written leaves the connection closed after it", async () => {
  // The server answers at the first bytes of a 4 MB request and reads no more: the rest of the request would
  // be taken for the next one on the same connection.
  const server = rawServer((c, r) => r === 1 ? ok(`early ${c}`) : "");
  const connections = new Connections();
  const big = Buffer.from(
    `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${4 << 20}\r\n\r\n${"x".repeat(4 << 20)}`,
  );
  try {
    const first = await call(connections, server.origin, big);
    assert.deepEqual(first, { status: 200, body: "early 1" });
    assert.deepEqual(await call(connections, server.origin), { status: 200, body: "early 2" });
    assert.equal(server.state.connections, 2);
  } finally {
    connections.closeIdle();
    server.close();
  }
});

Deno.test("an idle connection is closed after its keep-alive time, shorter when the backend says so", async () => {
  const server = rawServer(() => ok("hinted", "keep-alive: timeout=1\r\n"));
  const connections = new Connections();
  try {
    await call(connections, server.origin);
    await turn();
    // timeout=1 leaves no time after the second's margin: the next call needs a new connection.
    await call(connections, server.origin);
    assert.equal(server.state.connections, 2);
  } finally {
    connections.closeIdle();
    server.close();
  }
});

Deno.test("an answer that is not HTTP fails its call and closes the connection", async () => {
  const server = rawServer(() => "SSH-2.0-OpenSSH_9.6\r\n");
  const connections = new Connections();
  try {
    const outcome = await call(connections, server.origin);
    assert.match(String(outcome.error), /not HTTP/);
  } finally {
    connections.closeIdle();
    server.close();
  }
});
