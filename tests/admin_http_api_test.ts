/**
 * The admin API over HTTP on a running gateway process: a wrong or missing admin token is refused with 401
 * and changes nothing; the page's session cookie does not open the API and no other site may call it;
 * malformed requests get 4xx JSON errors; secrets are shown once and never logged or audited; the API's
 * OpenAPI document matches its routes and its messages; and the README's `--gateway` commands run as written.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { ADMIN_TOKEN, logIn } from "./support/admin_session.ts";
import { adminCli } from "./support/processes.ts";
import { TwoWays } from "./support/admin_two_ways.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { manifest } from "../routes.gen.ts";
import { COMMANDS_PATH, CommandSuccess, OPENAPI_PATH, WIRE_SCHEMAS } from "../lib/admin/http_wire.ts";

const root = new URL("..", import.meta.url).pathname;
const DENO_VERSION = "2.9.6";

Deno.test("a wrong or missing admin token is refused with 401 and changes nothing", async () => {
  await using ways = await TwoWays.start();
  const add = ["server", "add", "--name", "gpu", "--url", "http://127.0.0.1:9", "--model", "m1"];
  const { cookie } = await logIn(ways.gw.url);
  assert.ok(cookie, "the page's session opens");
  const attempts: Record<string, string>[] = [
    {},
    { Authorization: "Bearer wrong-token" },
    { Authorization: `Bearer ${ADMIN_TOKEN}x` },
    { Authorization: `Basic ${btoa(`admin:${ADMIN_TOKEN}`)}` },
    { Authorization: ADMIN_TOKEN },
    // The admin page's session is for the page; the API takes the token only.
    { Cookie: cookie },
  ];
  for (const headers of attempts) {
    const answer = await ways.post(add, headers);
    assert.equal(answer.status, 401, JSON.stringify(headers));
    assert.equal(answer.headers.get("www-authenticate"), 'Bearer realm="gateway admin"');
    assert.equal((await answer.json()).error.code, "admin_unauthenticated");
  }

  const wrong = await ways.remote(add, { GATEWAY_ADMIN_TOKEN: "wrong-token" });
  assert.equal(wrong.code, 1);
  assert.equal(wrong.stdout, "");
  assert.equal(
    wrong.stderr,
    `admin: the gateway at ${ways.gw.url} does not take this admin token (401): check --token or ` +
      "GATEWAY_ADMIN_TOKEN\n",
  );
  const wrongFlag = await adminCli({ GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN }, [
    ...["--gateway", ways.gw.url, "--token", "wrong-token", ...add],
  ]);
  assert.equal(wrongFlag.code, 1, "--token wins over the environment");
  const missing = await ways.remote(add, { GATEWAY_ADMIN_TOKEN: "" });
  assert.deepEqual(missing, {
    code: 2,
    stdout: "",
    stderr: "admin: --gateway needs the admin token: --token TOKEN, or GATEWAY_ADMIN_TOKEN\n",
  });

  const servers = await ways.remote(["server", "list", "--json"]);
  assert.deepEqual([servers.code, JSON.parse(servers.stdout)], [0, []]);
  // The page's login and the failed attempts are audited (one entry for the minute's bearer failures), no change.
  const audit = JSON.parse((await ways.remote(["audit", "--json"])).stdout);
  assert.deepEqual(audit.map((r: { action: string }) => r.action), ["admin.login_failed", "admin.login"]);
  assert.doesNotMatch(ways.gw.output(), /server\.add|gpu/);
});

Deno.test("the API answers no other site: no preflight, no CORS header", async () => {
  await using ways = await TwoWays.start();
  const preflight = await fetch(`${ways.gw.url}${COMMANDS_PATH}`, {
    method: "OPTIONS",
    headers: {
      Origin: "https://evil.example",
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "authorization, content-type",
    },
  });
  await preflight.body?.cancel();
  assert.equal(preflight.status, 405);
  assert.equal(preflight.headers.get("access-control-allow-origin"), null);
  const answer = await ways.post(["user", "list", "--json"], {
    Authorization: `Bearer ${ADMIN_TOKEN}`,
    Origin: "https://evil.example",
  });
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get("access-control-allow-origin"), null);
  assert.equal(answer.headers.get("cache-control"), "no-store");
  assert.deepEqual(CommandSuccess.parse(await answer.json()), { exitCode: 0, stdout: "[]", result: [] });
});

Deno.test("a gateway without an admin token keeps the API closed: 403, and the CLI says so", async () => {
  await using ways = await TwoWays.start({});
  const answer = await ways.post(["server", "list"], { Authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(answer.status, 403);
  assert.equal((await answer.json()).error.code, "admin_closed");
  const run = await ways.remote(["server", "list"]);
  assert.deepEqual(run, {
    code: 1,
    stdout: "",
    stderr: `admin: the gateway at ${ways.gw.url} refused (403): The admin endpoints are closed: ` +
      "GATEWAY_ADMIN_TOKEN is not set\n",
  });
});

Deno.test("malformed API requests get 4xx JSON errors and run nothing", async () => {
  await using ways = await TwoWays.start();
  const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const url = `${ways.gw.url}${COMMANDS_PATH}`;
  const sent: [RequestInit, number][] = [
    [{ method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: "{" }, 400],
    [{ method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: "[]" }, 400],
    [{ method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: '{"argv":"x"}' }, 400],
    [{ method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: '{"argv":[1]}' }, 400],
    [{
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ argv: ["user", "add", "--name", "x"], extra: true }),
    }, 400],
    [{ method: "POST", headers: { ...auth, "Content-Type": "text/plain" }, body: '{"argv":[]}' }, 415],
    [{
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ argv: ["user", "add", "--name", "x", "--json", "x".repeat(70_000)] }),
    }, 413],
    [{ method: "GET", headers: auth }, 405],
  ];
  for (const [init, status] of sent) {
    const answer = await fetch(url, init);
    const body = await answer.json();
    assert.equal(answer.status, status, JSON.stringify(body));
    assert.equal(typeof body.error.message, "string");
  }
  const users = await ways.post(["user", "list", "--json"]);
  assert.deepEqual((await users.json()).result, []);
});

Deno.test("a key made over HTTP works at once; its secret is shown once and never logged or audited", async () => {
  await using fake = FakeOllama.start("gpu");
  await using ways = await TwoWays.start();
  const apiKey = "server-secret-api-key-42";
  const added = await ways.remote([
    ...["server", "add", "--name", "gpu", "--url", fake.url, "--model", "m1", "--api-key", apiKey, "--json"],
  ]);
  assert.equal(added.code, 0, added.stderr);
  assert.equal(JSON.parse(added.stdout).hasApiKey, true);
  const created = await ways.remote(["key", "create", "--model", "m1", "--json"]);
  const { id, key } = JSON.parse(created.stdout);
  assert.equal(created.stdout.split(key).length - 1, 1, "the secret is printed once");
  const chat = await fetch(`${ways.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
  });
  assert.equal(chat.status, 200, "the gateway knows the server and the key at once");
  assert.equal((await chat.json()).choices[0].message.content, "Hello from gpu");
  const rotated = JSON.parse((await ways.remote(["key", "rotate", id, "--json"])).stdout);
  assert.equal(rotated.id, id);

  const shown = [
    (await ways.remote(["audit", "--json"])).stdout,
    (await ways.remote(["key", "show", id, "--json"])).stdout,
    (await ways.remote(["server", "show", "gpu", "--json"])).stdout,
    (await ways.remote(["usage", "--json"])).stdout,
  ];
  const audit = JSON.parse(shown[0]);
  assert.deepEqual(audit.map((r: { action: string }) => r.action), [
    "key.rotate",
    "key.create",
    "server.add",
  ]);
  for (const record of audit) assert.deepEqual(record.actor, { kind: "api", address: "127.0.0.1" });
  for (const secret of [apiKey, key, rotated.key]) {
    for (const text of [...shown, ways.gw.output()]) assert.equal(text.includes(secret), false);
  }
});

/** The README's block for a remote gateway, as an operator pastes it. */
async function readmeRemoteBlock(): Promise<string[]> {
  const readme = await Deno.readTextFile(`${root}README.md`);
  const section = readme.split(/^### Managing a remote gateway$/m)[1];
  assert.ok(section, "the README has the section");
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1];
  return block.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("#"));
}

Deno.test("the README's --gateway commands run as written against a running gateway", async () => {
  await using ways = await TwoWays.start();
  const lines = await readmeRemoteBlock();
  assert.match(lines[0], /^export GATEWAY_ADMIN_TOKEN=/, "the token comes from the environment");
  const commands = lines.slice(1);
  assert.ok(commands.length >= 3);
  for (const line of commands) {
    assert.ok(
      line.startsWith(`npx --yes deno@${DENO_VERSION} task admin --gateway https://gw.example `),
      line,
    );
    const script = line.replace(`npx --yes deno@${DENO_VERSION}`, '"$DENO"').replace(
      "https://gw.example",
      ways.gw.url,
    );
    const run = await new Deno.Command("bash", {
      args: ["-c", script],
      cwd: root,
      env: { DENO: Deno.execPath(), GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_KV: `${ways.dir}/absent/s.kv` },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, 0, `${line}: ${new TextDecoder().decode(run.stderr)}`);
  }
  const servers = JSON.parse((await ways.remote(["server", "list", "--json"])).stdout);
  const keys = JSON.parse((await ways.remote(["key", "list", "--json"])).stdout);
  assert.deepEqual(servers.map((s: { name: string }) => s.name), ["gpu1"]);
  assert.deepEqual(keys.map((k: { name: string }) => k.name), ["docs team"]);
});

Deno.test("the OpenAPI document is served, names exactly the API's routes and states its messages", async () => {
  await using ways = await TwoWays.start();
  const file = JSON.parse(await Deno.readTextFile(`${root}docs/admin-api.openapi.json`));
  const served = await fetch(`${ways.gw.url}${OPENAPI_PATH}`, {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.equal(served.status, 200);
  assert.deepEqual(await served.json(), file);
  const { cookie } = await logIn(ways.gw.url);
  const page = await fetch(`${ways.gw.url}${OPENAPI_PATH}`, { headers: { Cookie: cookie } });
  assert.deepEqual([page.status, await page.json()], [200, file], "the admin page's session may read it");
  const anonymous = await fetch(`${ways.gw.url}${OPENAPI_PATH}`);
  await anonymous.body?.cancel();
  assert.equal(anonymous.status, 401, "like every admin path, it is for the admin");

  const routes = Object.fromEntries(
    manifest.filter((e) => e.path.startsWith("/admin/api/")).map((e) => [
      e.path,
      Object.keys(e.module.handlers({} as never)).map((m) => m.toLowerCase()).sort(),
    ]),
  );
  const documented = Object.fromEntries(
    Object.entries(file.paths as Record<string, object>).map((
      [path, ops],
    ) => [path, Object.keys(ops).sort()]),
  );
  assert.deepEqual(documented, routes);
  for (const [name, schema] of Object.entries(WIRE_SCHEMAS)) {
    const { $schema: _, ...expected } = z.toJSONSchema(schema) as Record<string, unknown>;
    assert.deepEqual(file.components.schemas[name], expected, name);
  }
  const refs = JSON.stringify(file).match(/#\/components\/schemas\/\w+/g) ?? [];
  for (const ref of refs) assert.ok(file.components.schemas[ref.split("/").at(-1)!], ref);
});
