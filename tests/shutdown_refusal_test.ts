/**
 * A stopping gateway refuses what still comes on connections kept alive from before the signal, each refusal
 * in the error shape of the path it came on and recorded like any other refusal. Every chat path streams on a
 * connection of its own; after SIGTERM (every listener closed) the streams are let finish and each connection
 * carries one more request: 503 `shutting_down` in that path's shape, with `Retry-After`, and the connection
 * closed after it. The ledger read back after the exit holds exactly one record per chat request answered:
 * the streams, the refusals (under their key, or key-less), the held streams whose clients left. Run as
 * `deno task start` and as `deno task start:parallel` run the gateway.
 *
 * Each worker's drain is kept busy by a stream held at a second backend until the refusals are in, so they
 * come while the drain waits, not after it ended. Which worker took a held stream is read from its id's
 * prefix, which is per process (per worker isolate).
 */
import assert from "node:assert/strict";
import { GatedOllama } from "./support/gated_ollama.ts";
import { assertComplete, waitFor, waitUntilRefused } from "./support/chat_streams.ts";
import { assertLedgerConsistent, readLedger, recordsOf } from "./support/ledger_check.ts";
import {
  bodyFor,
  CHAT_PATHS,
  formatOf,
  type Shape,
  SHAPE_OF_FACE,
  shapeOf,
} from "./support/chat_path_shapes.ts";
import { KeptConnection } from "./support/kept_connection.ts";
import { withGateway } from "./support/draining_gateway.ts";
import { taskArgs } from "./support/task_args.ts";
import { manifest } from "../routes.gen.ts";
import type { UsageRecord } from "../lib/usage/types.ts";

/** One connection: a stream on `streamPath`, then, once the gateway stops, `then` on the same connection. */
interface Case {
  streamPath: string;
  then: { method: "POST" | "GET"; path: string; shape: Shape; keyless?: boolean };
}

const CASES: readonly Case[] = [
  ...CHAT_PATHS.map((
    { path, shape },
  ) => ({ streamPath: path, then: { method: "POST", path, shape } } as const)),
  // A key-less refusal, recorded as the other key-less ones are.
  {
    streamPath: "/v1/chat/completions",
    then: { method: "POST", path: "/v1/chat.php", shape: "B", keyless: true },
  },
  // Paths that record nothing still refuse in their own shape.
  { streamPath: "/v1/chat.php", then: { method: "GET", path: "/v1/models", shape: "A" } },
  { streamPath: "/api/chat", then: { method: "GET", path: "/api/tags", shape: "ollama" } },
];

interface OpenStream {
  conn: KeptConnection;
  /** What arrived so far. */
  text: () => string;
  /** The whole body, once the gateway ended it. */
  done: Promise<string>;
}

/** POSTs a streamed chat on `conn`; resolves once `arrived` holds of what came so far. */
async function openStream(
  conn: KeptConnection,
  path: string,
  key: string,
  arrived: (text: string) => boolean,
): Promise<OpenStream> {
  const res = await conn.request("POST", path, key, bodyFor(path));
  assert.equal(res.statusCode, 200, path);
  let text = "";
  const seen = Promise.withResolvers<void>();
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      text += decoder.decode(chunk, { stream: true });
      if (arrived(text)) seen.resolve();
    }
    return text;
  })();
  done.then(() => seen.reject(new Error(`${path}: ended before it was seen: ${text}`)), seen.reject);
  await seen.promise;
  return { conn, text: () => text, done };
}

/** The refusal's body in the path's shape, and nothing else. */
function assertRefusalShape(body: unknown, shape: Shape, where: string): void {
  const obj = body as Record<string, unknown>;
  if (shape === "ollama") {
    assert.deepEqual(Object.keys(obj).sort(), ["code", "error"], where);
    assert.equal(typeof obj.error, "string", where);
    assert.match(obj.error as string, /shutting down/, where);
    assert.equal(obj.code, "shutting_down", where);
    return;
  }
  if (shape === "anthropic") {
    assert.deepEqual(Object.keys(obj).sort(), ["error", "type"], where);
    const error = obj.error as Record<string, unknown>;
    assert.deepEqual(Object.keys(error).sort(), ["details", "message", "type"], where);
    assert.equal(error.type, "overloaded_error", where);
    assert.match(error.message as string, /shutting down/, where);
    assert.deepEqual(error.details, { error_code: "shutting_down" }, where);
    return;
  }
  assert.deepEqual(Object.keys(obj), ["error"], where);
  const error = obj.error as Record<string, unknown>;
  assert.match(error.message as string, /shutting down/, where);
  assert.equal(error.code, "shutting_down", where);
  if (shape === "A" || shape === "responses") {
    assert.deepEqual(Object.keys(error).sort(), ["code", "message", "param", "type"], where);
    assert.equal(error.type, "api_error", where);
  } else {
    assert.deepEqual(Object.keys(error).sort(), ["code", "message", "type"], where);
    assert.equal(error.type, "proxy_error", where);
  }
}

Deno.test("every chat path of the manifest is among the paths this test refuses on, in its face's shape", () => {
  const chatRoutes = manifest.filter((e) => e.module.refusal !== undefined);
  assert.deepEqual(
    chatRoutes.map((e) => [e.path, SHAPE_OF_FACE[e.module.face]]).sort(),
    CHAT_PATHS.map((c) => [c.path, c.shape]).sort(),
  );
});

/** The stream ended normally and carried `content` whole, in its path's format. */
function assertStreamComplete(shape: Shape, text: string, content: string): void {
  if (shape !== "anthropic" && shape !== "responses") {
    return assertComplete(shape === "A" ? "A" : "B", text, content);
  }
  const events = text.trimEnd().split("\n\n").map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)));
  if (shape === "responses") {
    assert.equal(events.at(-1).type, "response.completed", text);
    const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta);
    return assert.equal(deltas.join(""), content);
  }
  assert.equal(events.at(-1).type, "message_stop", text);
  const deltas = events.filter((e) => e.type === "content_block_delta").map((e) => e.delta.text ?? "");
  assert.equal(deltas.join(""), content);
}

type Records = UsageRecord[];
const summary = (recs: Records) =>
  recs.map((r) => [r.status, r.httpStatus, r.errorCode ?? "", r.format, r.stream]).sort();

/** A refusal that came on the kept connection, in `shape`, with its headers. */
async function assertRefusal(
  conn: KeptConnection,
  res: Awaited<ReturnType<KeptConnection["request"]>>,
  shape: Shape,
  where: string,
): Promise<void> {
  const text = await res.body.text();
  assert.equal(conn.connects, 1, `${where}: came on the kept connection`);
  assert.equal(res.statusCode, 503, `${where}: ${text}`);
  assert.equal(res.headers["retry-after"], "1", where);
  assert.equal(res.headers["connection"], "close", where);
  assert.match(String(res.headers["content-type"]), /^application\/json/, where);
  assertRefusalShape(JSON.parse(text), shape, where);
}

function refusesOnKeptConnections(args: string[], workers: number): Promise<void> {
  const backend = new GatedOllama({ words: 4, before: 2, delayMs: 5 });
  return withGateway(args, workers, backend, async ({ store, key, holdKey }, gateway, conns) => {
    const url = gateway.url;
    // A held stream on every worker, told apart by the process prefix of their ids (bounded: connections go
    // to the workers by a hash of their ports, so 32 all missing one worker of two is a 2^-31 chance).
    const holders: OpenStream[] = [];
    const workerIds = new Set<string>();
    while (workerIds.size < workers && holders.length < 32) {
      const conn = new KeptConnection(url);
      conns.push(conn);
      const held = await openStream(
        conn,
        "/v1/chat/completions",
        holdKey.key,
        (t) => /"id":"chatcmpl-/.test(t),
      );
      holders.push(held);
      workerIds.add(/"id":"chatcmpl-([0-9a-f]{16})/.exec(held.text())![1]);
    }
    assert.equal(workerIds.size, workers, "a stream held on every worker");

    const streams: OpenStream[] = [];
    for (const c of CASES) {
      const conn = new KeptConnection(url);
      conns.push(conn);
      streams.push(await openStream(conn, c.streamPath, key.key, (t) => t.includes("w0")));
    }
    await waitFor("every stream held at the backend", () => backend.waiting === CASES.length);

    gateway.child.kill("SIGTERM");
    // Every listener closed: every worker's drain is stopping.
    await waitUntilRefused(url);
    backend.open();

    const expected = backend.answer;
    for (const [i, c] of CASES.entries()) {
      const { conn, done } = streams[i];
      assertStreamComplete(shapeOf(c.streamPath), await done, expected);
      const { method, path, keyless, shape } = c.then;
      const res = await conn.request(
        method,
        path,
        keyless ? undefined : key.key,
        method === "POST" ? bodyFor(path) : undefined,
      );
      await assertRefusal(conn, res, shape, `${method} ${path} after a stream on ${c.streamPath}`);
    }
    assert.equal(backend.completed, CASES.length);

    // The refusals are answered and recorded; the held streams' clients leave, and the gateway ends.
    for (const held of holders) held.conn.client.destroy().catch(() => {});
    for (const held of holders) await held.done.catch(() => {});
    assert.equal((await gateway.child.status).code, 0);

    const ledger = await readLedger(store);
    const all = [...ledger.records.values()];
    const keyed = CASES.filter((c) => c.then.method === "POST" && !c.then.keyless);
    assert.deepEqual(
      summary(recordsOf(ledger, key.id)),
      [
        ...CASES.map((c) => ["ok", 200, "", formatOf(c.streamPath), true]),
        ...keyed.map((c) => ["rejected", 503, "shutting_down", formatOf(c.then.path), false]),
      ].sort(),
      "each stream, and each refusal under its key",
    );
    assert.deepEqual(
      summary(all.filter((r) => r.keyId === undefined)),
      [["rejected", 503, "shutting_down", "ollama", false]],
      "the key-less refusal, as a key-less one",
    );
    assert.deepEqual(
      summary(recordsOf(ledger, holdKey.id)),
      holders.map(() => ["partial", 200, "client_closed", "openai", true]),
      "the held streams, which their clients left",
    );
    const chatAnswers = CASES.length + CASES.filter((c) => c.then.method === "POST").length + holders.length;
    assert.equal(all.length, chatAnswers, "one record per chat request answered, no more");
    assertLedgerConsistent(ledger);
  });
}

/**
 * Streams of one length, let run together after the signal: each client sends its next request the moment its
 * stream ends, so the last ones come after every answer the gateway was giving has ended. They are refused and
 * recorded all the same.
 */
function refusesWhatFollowsTheLastAnswers(args: string[], workers: number): Promise<void> {
  const clients = 16;
  const backend = new GatedOllama({ words: 8, before: 2, delayMs: 10 });
  return withGateway(args, workers, backend, async ({ store, key }, gateway, conns) => {
    const paths = Array.from({ length: clients }, (_, i) => CHAT_PATHS[i % CHAT_PATHS.length]);
    const streams = await Promise.all(paths.map(({ path }) => {
      const conn = new KeptConnection(gateway.url);
      conns.push(conn);
      return openStream(conn, path, key.key, (t) => t.includes("w0"));
    }));
    await waitFor("every stream held at the backend", () => backend.waiting === clients);

    gateway.child.kill("SIGTERM");
    await waitUntilRefused(gateway.url);
    const next = streams.map(async ({ conn, done }, i) => {
      await done;
      const res = await conn.request("POST", paths[i].path, key.key, bodyFor(paths[i].path));
      await assertRefusal(conn, res, paths[i].shape, `the request after a stream on ${paths[i].path}`);
    });
    backend.open();
    await Promise.all(next);
    assert.equal((await gateway.child.status).code, 0);

    const ledger = await readLedger(store);
    assert.deepEqual(
      summary([...ledger.records.values()]),
      [
        ...paths.map(({ format }) => ["ok", 200, "", format, true]),
        ...paths.map(({ format }) => ["rejected", 503, "shutting_down", format, false]),
      ].sort(),
      "one record per chat request answered: each stream and each refusal",
    );
    assertLedgerConsistent(ledger);
  });
}

Deno.test("deno task start: after SIGTERM each path refuses on a kept connection in its own shape, and records it", async () => {
  await refusesOnKeptConnections(await taskArgs("start"), 1);
});

Deno.test("deno task start:parallel: the same from every worker", async () => {
  await refusesOnKeptConnections(await taskArgs("start:parallel"), 2);
});

Deno.test("deno task start: requests that follow the last answers are refused and recorded too", async () => {
  await refusesWhatFollowsTheLastAnswers(await taskArgs("start"), 1);
});

Deno.test("deno task start:parallel: requests that follow each worker's last answers are refused and recorded too", async () => {
  await refusesWhatFollowsTheLastAnswers(await taskArgs("start:parallel"), 2);
});
