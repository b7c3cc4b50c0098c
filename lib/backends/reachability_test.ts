import assert from "node:assert/strict";
import { GatewayError } from "../errors.ts";
import { Reachability } from "./reachability.ts";

/** A host that drops packets: the connection never completes, until the caller gives up. */
const blackhole = (options: Deno.ConnectOptions) =>
  new Promise<{ close(): void }>((_, reject) => {
    options.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true });
  });

Deno.test("connect timeout: a server that never accepts fails over after the timeout, counted against it", async () => {
  const reach = new Reachability(blackhole);
  const started = performance.now();
  const error = await Promise.resolve(reach.check("http://10.9.9.9:11434/api/chat", 100)).catch((e) => e);
  const took = performance.now() - started;
  assert.ok(error instanceof GatewayError);
  assert.equal(error.retryable, true);
  assert.equal(error.countsAgainstServer, true);
  assert.match(error.message, /within 100 ms/);
  assert.doesNotMatch(error.message, /10\.9\.9\.9/, "no backend address in a client-visible message");
  assert.ok(took >= 90 && took < 5000, `${took} ms`);
});

Deno.test("a server that answered lately is not checked again; a real listener passes the check", async () => {
  let connects = 0;
  const counting = (options: Deno.ConnectOptions) => {
    connects++;
    return Deno.connect(options);
  };
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${listener.addr.port}/api/chat`;
  const reach = new Reachability(counting);
  await reach.check(url, 1000);
  await reach.check(url, 1000);
  assert.equal(connects, 1);
  const other = new Reachability(counting);
  other.answered(url);
  await other.check(url, 1000);
  assert.equal(connects, 1, "an answer counts as reachable");
  const refused = await Promise.resolve(new Reachability().check("http://127.0.0.1:1/x", 1000)).catch((e) =>
    e
  );
  assert.match(refused.message, /could not reach/);
});
