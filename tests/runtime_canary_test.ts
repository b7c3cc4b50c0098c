/**
 * @module Canaries for the bindings into internals that an upgrade can take away without a type error (see
 * lib/runtime/README.md): the runtime's `Deno[Deno.internal].serveHttpOnConnection`, on which the gateway's
 * own listener stands. It fails saying what broke, what the gateway does without it, and the fix to make. The
 * other such binding, http-parser-js's position in its input, has its canary beside the backend connections
 * (lib/backends/connections_test.ts, the stray bytes).
 */
import assert from "node:assert/strict";
import { listen } from "../lib/server/listener.ts";

/** The runtime the gateway was last checked on; the first place to look when a canary fails after it. */
const CHECKED_ON = "Deno 2.9.6";

const LISTENER_FIX = `Without it the gateway falls back to Deno.serve, and GATEWAY_HEAD_TIMEOUT_MS, ` +
  `GATEWAY_KEEPALIVE_TIMEOUT_MS, GATEWAY_MAX_CONNECTIONS(_PER_ADDRESS), the per-connection key memo and ` +
  `surviving accept errors are off. Fix: find the function this runtime's ext/http/00_serve.ts uses to serve ` +
  `HTTP on one accepted Deno.Conn (it was serveHttpOnConnection(connection, signal, handler, onError, ` +
  `onListen) in ${CHECKED_ON}), point serveOnConnection() in lib/server/listener.ts and runtimeEntry() ` +
  `here at it, and run this test again; until then, pin the runtime to the version above.`;

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: (request: Request) => Response,
  onError: (error: unknown) => Response,
  onListen: () => void,
) => { finished: Promise<void> };

/** The lookup `serveOnConnection()` in lib/server/listener.ts makes. */
function runtimeEntry(): unknown {
  const internals = (Deno as unknown as Record<symbol, Record<string, unknown> | undefined>)[
    (Deno as unknown as { internal: symbol }).internal
  ];
  return internals?.serveHttpOnConnection;
}

Deno.test("runtime canary: Deno[Deno.internal].serveHttpOnConnection serves HTTP on an accepted connection", async () => {
  const serve = runtimeEntry();
  assert.equal(
    typeof serve,
    "function",
    `Deno ${Deno.version.deno} has no function Deno[Deno.internal].serveHttpOnConnection. ${LISTENER_FIX}`,
  );
  assert.equal(
    (serve as ServeOnConnection).length,
    5,
    `Deno ${Deno.version.deno}'s serveHttpOnConnection takes ${(serve as ServeOnConnection).length} ` +
      `arguments, not (connection, signal, handler, onError, onListen). ${LISTENER_FIX}`,
  );
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const accepted = listener.accept();
    const answer = fetch(`http://127.0.0.1:${listener.addr.port}/canary`, {
      headers: { connection: "close" },
    });
    const { finished } = (serve as ServeOnConnection)(
      await accepted,
      new AbortController().signal,
      (request) => new Response(`served ${new URL(request.url).pathname}`),
      () => new Response("failed", { status: 500 }),
      () => {},
    );
    const text = await (await answer).text();
    assert.equal(
      text,
      "served /canary",
      `Deno ${Deno.version.deno}'s serveHttpOnConnection no longer answers a request with the handler given ` +
        `third. ${LISTENER_FIX}`,
    );
    // The client asked to close, so the connection ends, and with it the serving.
    await finished;
  } finally {
    listener.close();
  }
});

Deno.test("runtime canary: the gateway's listener accepts connections itself, with its bounds on", async () => {
  const said: string[] = [];
  const listening = listen(
    {
      hostname: "127.0.0.1",
      port: 0,
      limits: { headTimeoutMs: 5_000, keepAliveTimeoutMs: 5_000, maxConnections: 16 },
      log: (line) => said.push(line),
    },
    () => new Response("ok"),
  );
  try {
    assert.ok(
      listening.stats,
      `lib/server/listener.ts found no serveHttpOnConnection on Deno ${Deno.version.deno} and served ` +
        `through Deno.serve (it said: ` +
        `${said.join("; ") || "nothing"}). ${LISTENER_FIX}`,
    );
    const response = await fetch(`http://127.0.0.1:${listening.addr.port}/`, {
      headers: { connection: "close" },
    });
    assert.equal(await response.text(), "ok");
  } finally {
    listening.close();
  }
});
