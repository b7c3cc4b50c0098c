/** @module The `--gateway` client against loopback servers: what it sends, and what it makes of answers. */
import assert from "node:assert/strict";
import { runRemote } from "./http_client.ts";
import type { GatewayTarget } from "./gateway_target.ts";

/** A loopback server answering every request with `answer`, recording what it was sent. */
function serve(answer: () => Response) {
  const seen: { method: string; path: string; auth: string | null; body: unknown }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const body = await request.text();
    seen.push({
      method: request.method,
      path: new URL(request.url).pathname,
      auth: request.headers.get("authorization"),
      body: body ? JSON.parse(body) : undefined,
    });
    return answer();
  });
  return { seen, server, url: `http://127.0.0.1:${server.addr.port}` };
}

async function run(args: string[], target: GatewayTarget) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runRemote(args, target, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out, err };
}

Deno.test("the command line goes, unparsed, to the API under the gateway's path, with the token", async () => {
  const { seen, server, url } = serve(() => Response.json({ exitCode: 0, stdout: "[]", result: [] }));
  try {
    const result = await run(["key", "list", "--json"], { base: new URL(`${url}/gw/`), token: "t0k" });
    assert.deepEqual(result, { code: 0, out: ["[]"], err: [] });
    assert.deepEqual(seen, [{
      method: "POST",
      path: "/gw/admin/api/commands",
      auth: "Bearer t0k",
      body: { argv: ["key", "list", "--json"] },
    }]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a failure answer is printed as the CLI prints it, with its exit status", async () => {
  const { server, url } = serve(() =>
    Response.json({
      exitCode: 2,
      stderr: "admin: key create: --model is required",
      error: { message: "--model is required", code: "invalid_command" },
    }, { status: 422 })
  );
  try {
    const result = await run(["key", "create"], { base: new URL(`${url}/`), token: "t" });
    assert.deepEqual(result, { code: 2, out: [], err: ["admin: key create: --model is required"] });
  } finally {
    await server.shutdown();
  }
});

Deno.test("what is not the API's answer is one line and exit 1, never printed as output", async () => {
  const answers: [() => Response, RegExp][] = [
    [
      () => new Response(null, { status: 301, headers: { Location: "https://gw.example/" } }),
      /redirects \(301\) to https:\/\/gw\.example\/: give that address$/,
    ],
    [
      () => new Response("<html>bad gateway</html>", { status: 502 }),
      /answered 502, not with the admin API's/,
    ],
    [() => Response.json({ exitCode: 0, stdout: 5 }), /answered 200, not with the admin API's answer$/],
    // A success body under a failure status, or the reverse, is not trusted either.
    [() => Response.json({ exitCode: 0, stdout: "x", result: 1 }, { status: 500 }), /answered 500/],
    [
      () =>
        Response.json({ error: { message: "Not found: /admin/api/commands", code: "not_found" } }, {
          status: 404,
        }),
      /refused \(404\): Not found: \/admin\/api\/commands$/,
    ],
  ];
  for (const [answer, message] of answers) {
    const { server, url } = serve(answer);
    try {
      const result = await run(["key", "list"], { base: new URL(`${url}/`), token: "t" });
      assert.equal(result.code, 1);
      assert.deepEqual(result.out, []);
      assert.equal(result.err.length, 1);
      assert.match(result.err[0], new RegExp(`^admin: the gateway at ${url} `));
      assert.match(result.err[0], message);
    } finally {
      await server.shutdown();
    }
  }
});

Deno.test("an unreachable gateway is one line and exit 1", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const result = await run(["key", "list"], { base: new URL(`http://127.0.0.1:${port}/`), token: "t" });
  assert.equal(result.code, 1);
  assert.deepEqual(result.out, []);
  assert.match(
    result.err[0],
    new RegExp(`^admin: cannot reach the gateway at http://127.0.0.1:${port}: \\S`),
  );
  assert.doesNotMatch(result.err[0], /\n/);
});
