/**
 * A client that half-closes its connection after sending a request. The runtime's HTTP engine (hyper, with
 * half-closed connections not supported) reads the end of the client's stream as the client leaving, like
 * nginx does (499), and it is indistinguishable from a client that closed for good: the gateway cancels the
 * request at once, frees the model server's slot and records the request as closed by its client, rather
 * than let an abandoned generation run on. SECURITY.md, "Known limits".
 */
import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";
import { connectTo, readUntilClosed, send } from "./support/raw_http.ts";
import { eventually, PATIENCE_MS } from "./support/wait_for.ts";

Deno.test("a half-closed client is taken as gone: its backend call is cancelled and recorded as client_closed", async () => {
  await using s = await Scenario.start();
  // Longer than the test waits for anything: a server that goes idle within the wait was cancelled.
  s.fake().firstByteDelayMs = 4 * PATIENCE_MS;
  const key = await s.gw.key();
  for (const stream of [false, true]) {
    const recorded = s.gw.usage.length;
    const conn = await connectTo(s.gw.url);
    const json = JSON.stringify({ messages: USER_HELLO, stream });
    assert.ok(
      await send(
        conn,
        `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n` +
          `Authorization: Bearer ${key}\r\nContent-Length: ${json.length}\r\n\r\n${json}`,
      ),
    );
    await conn.closeWrite();
    const { text } = await readUntilClosed(conn, PATIENCE_MS);
    assert.equal(text, "", "the connection is closed without an answer");
    // The record is taken when the request has ended; by then the server was called or never will be.
    const record = await eventually("the request's record", () => s.gw.usage[recorded]);
    await eventually("the server's slot freed", () => s.fake().running === 0);
    assert.equal(record.errorCode, "client_closed", `stream ${stream}`);
    assert.equal(record.httpStatus, 499);
  }
});
