import assert from "node:assert/strict";
import type { Deps } from "../deps.ts";
import { newClient } from "../http/client.ts";
import { signalCut } from "../runtime/request_cut.ts";
import type { KeyRecord } from "../store/records.ts";
import { withCors } from "./cors.ts";

const PAGE = "https://app.example.com";

/** Services with one key, bound to the page's site, that count their lookups. */
function services() {
  const key = { allowDomains: ["app.example.com"], allowIps: [] } as unknown as KeyRecord;
  const counted = { lookups: 0 };
  const deps = {
    view: {
      findKey: () => {
        counted.lookups++;
        return key;
      },
    },
    config: { corsOrigins: [] },
  } as unknown as Deps;
  return { key, counted, deps };
}

/** The client of a request whose signal is already aborted: CORS does not care. */
const gone = () => newClient(signalCut(AbortSignal.abort()));

const request = () =>
  new Request("http://gw/v1/models", { headers: { origin: PAGE, authorization: "Bearer sk-page" } });

Deno.test("CORS reads the key its handler noted on the Client, without a second lookup", async () => {
  const { key, counted, deps } = services();
  const response = await withCors(deps, ["GET"], request(), gone(), (_, client) => {
    client.key = key;
    return new Response("ok");
  });
  assert.equal(response.headers.get("access-control-allow-origin"), PAGE);
  assert.equal(counted.lookups, 0);
});

Deno.test("CORS looks the key up itself for a handler that asked for none", async () => {
  const { counted, deps } = services();
  const response = await withCors(
    deps,
    ["GET"],
    request(),
    gone(),
    () => new Response("ok"),
  );
  assert.equal(response.headers.get("access-control-allow-origin"), PAGE);
  assert.equal(counted.lookups, 1);
});

Deno.test("CORS takes a handler's finding of no key as final: the origin lists decide", async () => {
  const { counted, deps } = services();
  const response = await withCors(deps, ["GET"], request(), gone(), (_, client) => {
    client.key = null;
    return new Response("no", { status: 401 });
  });
  assert.equal(response.headers.get("access-control-allow-origin"), null);
  assert.equal(response.headers.get("vary"), "Origin");
  assert.equal(counted.lookups, 0);
});
