import assert from "node:assert/strict";
import { loadConfig } from "../lib/config.ts";
import { Scenario, USER_HELLO } from "./harness.ts";
import {
  assertErrorShape,
  assertNoServerErrors,
  assertServesEveryPath,
  type FaceLetter,
} from "./support/hostile_faces.ts";
import { chatHead, chunk, RawConnection, type RawResponse } from "./support/hostile_wire.ts";
import { connectTo, readUntilClosed } from "./support/raw_http.ts";
import { PATIENCE_MS } from "./support/wait_for.ts";

const LIMIT = 64 * 1024;
const FACES: [string, FaceLetter][] = [["/api/v1/chat/completions.php", "A"], ["/v1/chat.php", "B"]];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function assertRefusal(res: RawResponse | undefined, status: number, face: FaceLetter, where: string) {
  assert.ok(res, `${where}: no answer while the upload was unfinished`);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/, where);
  assertErrorShape(JSON.parse(res.body), res.status, face, where);
  assert.equal(res.status, status, where);
}

Deno.test("a declared Content-Length over the limit gets 413 before the rest of the body is sent", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { maxBodyBytes: LIMIT } });
  const key = await s.gw.key();
  for (const [path, face] of FACES) {
    using conn = await RawConnection.open(s.gw.url);
    await conn.write(chatHead(path, key, `Content-Length: ${100 * 1024 * 1024}\r\n`));
    await conn.write('{"messages":[{"role":"user","content":"' + "x".repeat(100));
    assertRefusal(await conn.response(5_000), 413, face, `${path}, 100 MB declared`);
    assert.ok(conn.sent < 1024, "answered with nearly all of the 100 MB still unsent");
  }
  assert.equal(s.fake().chats.length, 0);
  assertNoServerErrors(s.gw);
  await assertServesEveryPath(s.gw, key);
});

Deno.test("a chunked upload is refused with 413 once it passes the limit, without waiting for its end", async () => {
  await using s = await Scenario.start([{ name: "a" }], { config: { maxBodyBytes: LIMIT } });
  const key = await s.gw.key();
  for (const [path, face] of FACES) {
    using conn = await RawConnection.open(s.gw.url);
    await conn.write(chatHead(path, key, "Transfer-Encoding: chunked\r\n"));
    await conn.write(chunk('{"messages":[{"role":"user","content":"'));
    // Past the limit by one chunk, and no terminating chunk: only a gateway that stops reading can answer.
    for (let sent = 0; sent <= LIMIT; sent += 8192) await conn.write(chunk("x".repeat(8192)));
    assertRefusal(await conn.response(5_000), 413, face, `${path}, chunked`);
  }
  assert.equal(s.fake().chats.length, 0);
  assertNoServerErrors(s.gw);
  await assertServesEveryPath(s.gw, key);
});

Deno.test("a slow upload gets 408 in the path's format when GATEWAY_BODY_TIMEOUT_MS runs out", async () => {
  const timeoutMs = 300;
  await using s = await Scenario.start([{ name: "a" }], { config: { bodyTimeoutMs: timeoutMs } });
  const key = await s.gw.key();
  for (const [path, face] of FACES) {
    for (const framing of ["Content-Length: 1000\r\n", "Transfer-Encoding: chunked\r\n"]) {
      const where = `${path}, ${framing.trim()}`;
      using conn = await RawConnection.open(s.gw.url);
      await conn.write(chatHead(path, key, framing));
      const started = Date.now();
      const answer = conn.response(5_000);
      let answered = false;
      answer.then(() => answered = true);
      // One byte every 40 ms: each arrives well inside any idle timeout, the whole never arrives at all.
      for (let i = 0; i < 100 && !answered; i++) {
        await conn.write(framing.startsWith("Content") ? "{" : chunk("{"));
        await sleep(40);
      }
      assertRefusal(await answer, 408, face, where);
      assert.ok(Date.now() - started >= timeoutMs - 20, `${where}: answered before the timeout`);
      assert.ok(conn.sent < 1000, `${where}: the upload had not finished`);
    }
  }
  assert.equal(s.fake().chats.length, 0);
  assertNoServerErrors(s.gw);
  await assertServesEveryPath(s.gw, key);
});

Deno.test("an upload the client abandons midway is recorded as its error, not the gateway's", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  for (const [path] of FACES) {
    const conn = await RawConnection.open(s.gw.url);
    await conn.write(chatHead(path, key, "Content-Length: 5000\r\n") + '{"messages":[');
    await sleep(50);
    conn.close();
  }
  for (let i = 0; i < 100 && s.gw.usage.length < FACES.length; i++) await sleep(20);
  assert.deepEqual(s.gw.usage.map((u) => [u.httpStatus, u.errorCode]), [
    [400, "invalid_request"],
    [400, "invalid_request"],
  ]);
  await assertServesEveryPath(s.gw, key);
});

/** What the HTTP runtime itself must cope with; it may answer or hang up, but never with a 5xx. */
const RUNTIME_JUNK: [string, (key: string) => string][] = [
  [
    "20,000 headers",
    () => "POST /v1/chat.php HTTP/1.1\r\nHost: x\r\n" + "X-Flood: v\r\n".repeat(20_000) + "\r\n",
  ],
  [
    "one 2 MB header",
    () => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(2 << 20)}\r\n\r\n`,
  ],
  ["a 1 MB request line", () => `POST /v1/chat.php?${"q".repeat(1 << 20)} HTTP/1.1\r\nHost: x\r\n\r\n`],
  ["binary garbage", () => "\u0000\u0001\u0002\u00ff garbage\r\n\r\n"],
  ["a Content-Length that is not a number", (k) => chatHead("/v1/chat.php", k, "Content-Length: lots\r\n")],
  [
    "two Content-Lengths",
    (k) => chatHead("/v1/chat.php", k, "Content-Length: 2\r\nContent-Length: 9\r\n") + "{}",
  ],
  [
    "Content-Length with chunked",
    (k) =>
      chatHead("/v1/chat/completions", k, "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n") +
      "0\r\n\r\n",
  ],
  [
    "a chunk size that is not hex",
    (k) => chatHead("/v1/chat/completions", k, "Transfer-Encoding: chunked\r\n") + "zz\r\n{}\r\n",
  ],
];

/**
 * Sends `request` on a new connection and reads until the gateway closes it; what arrived must be nothing or a
 * 4xx. A gateway that hangs on the input fails here, after PATIENCE_MS, instead of passing as silence.
 */
async function answerOrHangUp(url: string, name: string, request: string): Promise<void> {
  const conn = await connectTo(url);
  try {
    const bytes = new TextEncoder().encode(request);
    const sending = (async () => {
      // The gateway may answer and hang up before it has read everything: a failed write is no failure.
      try {
        for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
      } catch { /* closed by the gateway */ }
    })();
    const { text } = await readUntilClosed(conn, PATIENCE_MS).catch((error) => {
      throw new Error(`${name}: the gateway neither answered nor closed the connection (${error.message})`);
    });
    await sending;
    assert.ok(text === "" || /^HTTP\/1\.1 4\d\d /.test(text), `${name}: ${text.split("\r\n")[0]}`);
  } finally {
    try {
      conn.close();
    } catch { /* closed already */ }
  }
}

Deno.test("header floods and broken framing get a 4xx or a closed connection, never a 5xx or a hang", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  for (const [name, request] of RUNTIME_JUNK) await answerOrHangUp(s.gw.url, name, request(key));
  // Many at once, as a flood would come: each still ends, in one of the same two ways.
  await Promise.all(
    RUNTIME_JUNK.flatMap(([name, request]) =>
      [1, 2, 3].map(() => answerOrHangUp(s.gw.url, name, request(key)))
    ),
  );
  assert.equal(s.fake().chats.length, 0);
  assertNoServerErrors(s.gw);
  await assertServesEveryPath(s.gw, key);
});

Deno.test("a connection stuck in its headers does not hold up anyone else", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  using stuck = await RawConnection.open(s.gw.url);
  await stuck.write("POST /v1/chat.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bear");
  await assertServesEveryPath(s.gw, key);
  const res = await s.gw.post("/v1/chat.php", key, { messages: USER_HELLO });
  assert.equal(res.status, 200);
  await res.body?.cancel();
});

Deno.test("GATEWAY_BODY_TIMEOUT_MS: 30 s by default, a positive number of ms when set", () => {
  assert.equal(loadConfig({}).bodyTimeoutMs, 30_000);
  assert.equal(loadConfig({ GATEWAY_BODY_TIMEOUT_MS: "1500" }).bodyTimeoutMs, 1500);
  for (const bad of ["0", "-1", "soon", "1.5"]) {
    assert.throws(() => loadConfig({ GATEWAY_BODY_TIMEOUT_MS: bad }), /GATEWAY_BODY_TIMEOUT_MS/, bad);
  }
});
