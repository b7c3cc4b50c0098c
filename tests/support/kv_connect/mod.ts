/**
 * @module A KV Connect server for tests and benchmarks, in front of a local Deno KV file: what a self-hosted
 * `denokv` is to a gateway started with `GATEWAY_KV=http://...` and `DENO_KV_ACCESS_TOKEN`, with a round-trip
 * latency and an outage the test controls. Clients reach it only through `Deno.openKv(url)`, as they would a
 * real `denokv`: metadata exchange at `/`, then snapshot reads, atomic writes and watches under `/v2`
 * (protocol versions 2 and 3 of denokv's `proto/kv-connect.md`).
 *
 * An outage stops the listener: connections are refused, as from a store that is down. Deno's client then
 * retries a read or write without end (200 ms and more apart) until the store is back; it never fails it.
 */
import { LoopbackServer } from "../../fakes/loopback_server.ts";
import { Credentials } from "./metadata.ts";
import { Network } from "./network.ts";
import { snapshotRead } from "./read.ts";
import { describe, type LoggedRequest } from "./request_log.ts";
import { BadRequest } from "./schema.ts";
import { watch, type Watching } from "./watch.ts";
import { atomicWrite } from "./write.ts";

export interface KvConnectOptions {
  /** The local Deno KV file behind the server. */
  path: string;
  /** The access token clients must present (`DENO_KV_ACCESS_TOKEN`). */
  token: string;
  /** Round-trip latency added to every request, in ms. */
  latencyMs?: number;
}

export type Operation = "metadata" | "snapshot_read" | "atomic_write" | "watch";

export interface KvConnectServer {
  url: string;
  /** The local store behind the server, for a test to look at or prepare directly. */
  store: Deno.Kv;
  setLatency(ms: number): void;
  /** On: connections are refused until it is turned off again. Resolves once it has taken effect. */
  setOutage(on: boolean): Promise<void>;
  /** How many requests of each kind reached the store so far. */
  requests(): Record<Operation, number>;
  /** Reads and writes that reached the store, in order of arrival, from the `from`th on (see `logLength`). */
  log(from?: number): LoggedRequest[];
  /** How many reads and writes reached the store so far: where a later `log` is to start. */
  logLength(): number;
  close(): Promise<void>;
}

export async function startKvConnect(
  { path, token, latencyMs = 0 }: KvConnectOptions,
): Promise<KvConnectServer> {
  const store = await Deno.openKv(path);
  const credentials = new Credentials(token);
  const network = new Network(latencyMs);
  const watches = new Set<Watching>();
  const counts: Record<Operation, number> = { metadata: 0, snapshot_read: 0, atomic_write: 0, watch: 0 };
  // Bodies as they came, decoded only when a test asks (`log`).
  const bodies: [LoggedRequest["operation"], Uint8Array][] = [];

  const serve = async (request: Request): Promise<Response> => {
    const operation = operationOf(request);
    if (!operation) return new Response("Resource not found.", { status: 404 });
    if (operation !== "metadata") credentials.authorize(request);
    counts[operation]++;
    if (operation === "metadata") return await credentials.exchange(request);
    const body = await bodyOf(request);
    if (operation === "watch") {
      const watching = watch(store, body, {
        delay: () => network.fromStore(),
        onEnd: () => watches.delete(watching),
      });
      watches.add(watching);
      return new Response(watching.body, {
        headers: { "content-type": "application/octet-stream" },
      });
    }
    bodies.push([operation, body]);
    const answer = operation === "snapshot_read"
      ? await snapshotRead(store, body)
      : await atomicWrite(store, body);
    return new Response(answer, { headers: { "content-type": "application/x-protobuf" } });
  };

  const server = new LoopbackServer(async (request) => {
    if (!await network.toStore()) return new Response("The store is unreachable.", { status: 503 });
    let response: Response;
    try {
      response = await serve(request);
    } catch (error) {
      if (!(error instanceof BadRequest)) console.error("KV Connect test server:", error);
      response = error instanceof BadRequest
        ? new Response(error.message, { status: error.status })
        : new Response("An internal server error occurred.", { status: 500 });
    }
    // A watch's messages each take the way back on their own.
    if (response.headers.get("content-type") !== "application/octet-stream") await network.fromStore();
    return response;
  });

  return {
    url: server.url,
    store,
    setLatency: (ms) => network.latencyMs = ms,
    async setOutage(on) {
      if (on) {
        network.fail();
        for (const watching of watches) watching.cut();
        await server.pause();
      } else {
        server.resume();
        network.heal();
      }
    },
    requests: () => ({ ...counts }),
    log: (from = 0) => bodies.slice(from).map(([operation, body]) => describe(operation, body)),
    logLength: () => bodies.length,
    async close() {
      network.fail();
      for (const watching of watches) watching.cut();
      await server.close();
      store.close();
    },
  };
}

/** A client that went away while sending is a client's fault, not the server's. */
async function bodyOf(request: Request): Promise<Uint8Array> {
  try {
    return new Uint8Array(await request.arrayBuffer());
  } catch {
    throw new BadRequest("The request body could not be read.");
  }
}

function operationOf(request: Request): Operation | undefined {
  if (request.method !== "POST") return undefined;
  const path = new URL(request.url).pathname;
  if (path === "/") return "metadata";
  const match = /^\/v2\/(snapshot_read|atomic_write|watch)$/.exec(path);
  return match?.[1] as Operation | undefined;
}

/**
 * Opens the server's store as any client does: `Deno.openKv(url)` with the token in `DENO_KV_ACCESS_TOKEN`,
 * which Deno reads from the environment only while opening; the variable is put back as it was afterwards.
 */
export async function openKvConnect(url: string, token: string): Promise<Deno.Kv> {
  const before = Deno.env.get("DENO_KV_ACCESS_TOKEN");
  Deno.env.set("DENO_KV_ACCESS_TOKEN", token);
  try {
    return await Deno.openKv(url);
  } finally {
    if (before === undefined) Deno.env.delete("DENO_KV_ACCESS_TOKEN");
    else Deno.env.set("DENO_KV_ACCESS_TOKEN", before);
  }
}
