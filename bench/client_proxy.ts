/**
 * The bare proxy with another upstream client, for the bench's reference rows: which client the runtime offers
 * makes a backend call cheapest. Each takes the request body whole and the answer as text (as the gateway
 * does with a whole answer, to parse it) and hands that text back; only the client differs.
 * Usage: `deno run --allow-net --allow-env --allow-read bench/client_proxy.ts CLIENT BACKEND_URL`, CLIENT one of
 * `fetch-client` (fetch with a pool of its own), `node-http` (node:http with a keep-alive Agent), `undici`
 * (an undici Pool's promise API), `undici-dispatch` (an undici Agent's callback API) or `gateway-client` (the
 * gateway's own, on the runtime's TCP);
 * prints `listening on http://127.0.0.1:PORT`.
 */
import http from "node:http";
import { Buffer } from "node:buffer";
import { Agent, type Dispatcher, Pool } from "undici";
import { post } from "../lib/backends/upstream.ts";
import { CallAbort } from "../lib/backends/call_abort.ts";

type Call = (
  body: Uint8Array<ArrayBuffer>,
  signal: AbortSignal,
) => Promise<{ status: number; body: BodyInit | null }>;

const [client, backend] = Deno.args;
if (!client || !backend) throw new Error("usage: client_proxy.ts CLIENT BACKEND_URL");
const target = new URL("/api/chat", backend);
const JSON_TYPE = { "Content-Type": "application/json" };

function fetchWithClient(): Call {
  const pool = Deno.createHttpClient({});
  return async (body, signal) => {
    const res = await fetch(target, { method: "POST", headers: JSON_TYPE, body, signal, client: pool });
    return { status: res.status, body: await res.text() };
  };
}

function nodeHttp(): Call {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  return (body, signal) =>
    new Promise((resolve, reject) => {
      const req = http.request(target, {
        method: "POST",
        agent,
        signal,
        headers: { ...JSON_TYPE, "Content-Length": String(body.byteLength) },
      }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => text += chunk);
        res.on("end", () => resolve({ status: res.statusCode ?? 502, body: text }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
}

function undiciPool(): Call {
  const pool = new Pool(target.origin, { connections: 128 });
  return async (body, signal) => {
    const res = await pool.request({
      path: target.pathname,
      method: "POST",
      headers: JSON_TYPE,
      body,
      signal,
    });
    return { status: res.statusCode, body: await res.body.text() };
  };
}

function undiciDispatch(): Call {
  const agent = new Agent();
  return (body, signal) =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 502;
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (controller) => {
          if (signal.aborted) controller.abort(signal.reason);
          else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
        },
        onResponseStart: (_c, statusCode) => void (status = statusCode),
        onResponseData: (_c, chunk) => void chunks.push(chunk),
        onResponseEnd: () => resolve({ status, body: Buffer.concat(chunks).toString("utf8") }),
        onResponseError: (_c, error) => reject(error),
      };
      agent.dispatch({
        origin: target.origin,
        path: target.pathname,
        method: "POST",
        headers: JSON_TYPE,
        body,
      }, handler);
    });
}

/** The gateway's own backend client (`lib/backends/upstream.ts`): its connections on the runtime's TCP. */
function gatewayClient(): Call {
  return async (body, signal) => {
    const stop = new CallAbort();
    signal.addEventListener("abort", () => stop.abort(signal.reason), { once: true });
    const answer = await post(target.href, JSON_TYPE, new TextDecoder().decode(body), stop);
    return { status: answer.status, body: await answer.text(64 << 20) };
  };
}

const CLIENTS: Record<string, () => Call> = {
  "fetch-client": fetchWithClient,
  "node-http": nodeHttp,
  "undici": undiciPool,
  "undici-dispatch": undiciDispatch,
  "gateway-client": gatewayClient,
};
const make = CLIENTS[client];
if (!make) throw new Error(`unknown client ${client}; one of ${Object.keys(CLIENTS).join(", ")}`);
const call = make();

Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
}, async (req) => {
  try {
    const answer = await call(await req.bytes(), req.signal);
    return new Response(answer.body, { status: answer.status, headers: JSON_TYPE });
  } catch (error) {
    if (req.signal.aborted) return new Response(null, { status: 499 });
    throw error;
  }
});
