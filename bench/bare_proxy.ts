/**
 * The reference ceiling of the load bench: the least a Deno HTTP proxy can do, `Deno.serve` handing each
 * request body to `fetch` and the backend's response straight back. The gateway runs on the same runtime, so
 * its distance to this process is the cost of its own work, not of Deno's HTTP stack.
 * Usage: `deno run --allow-net bench/bare_proxy.ts http://127.0.0.1:BACKEND_PORT`; prints
 * `listening on http://127.0.0.1:PORT`.
 */

const backend = Deno.args[0];
if (!backend) throw new Error("usage: bare_proxy.ts BACKEND_URL");

// Ending through Deno.exit, as the gateway does, lets a `--cpu-prof` run write its profile.
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
}, async (req) => {
  try {
    const upstream = await fetch(`${backend}/api/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      // Read whole, as the gateway reads it: the backend gets a Content-Length, not a chunked body.
      body: await req.arrayBuffer(),
      signal: req.signal,
    });
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  } catch (error) {
    // The load generator leaves with requests in flight when a run ends; that is no fault to report.
    if (req.signal.aborted) return new Response(null, { status: 499 });
    throw error;
  }
});
