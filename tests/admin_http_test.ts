/**
 * The admin CLI driven over HTTP: `deno task admin --gateway URL` against a running gateway process prints and
 * exits exactly as `deno task admin` on a store file does, for every command of the operations contract and
 * for the console test's bad inputs; only the audit trail's actor differs (`api` and the caller's address
 * instead of `cli`). A wrong or missing admin token is refused with 401 and changes nothing; the page's
 * session cookie does not open the API and no other site may call it; secrets are shown once and never
 * logged or audited; the API's OpenAPI document matches its routes and its messages; and the README's
 * `--gateway` commands run as written.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { adminCli, type GatewayProcess, startGateway } from "./support/processes.ts";
import { ADMIN_TOKEN, logIn } from "./support/admin_session.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { manifest } from "../routes.gen.ts";
import {
  CommandFailure,
  COMMANDS_PATH,
  CommandSuccess,
  OPENAPI_PATH,
  WIRE_SCHEMAS,
} from "../lib/admin/http_wire.ts";

const root = new URL("..", import.meta.url).pathname;
const DAY_MS = 24 * 60 * 60 * 1000;
const DENO_VERSION = "2.9.6";

type Run = Awaited<ReturnType<typeof adminCli>>;

/**
 * A gateway process with the admin token on its own store, and the two ways to run a command: on a store file
 * of its own (`local`), and through the gateway (`remote`). The remote CLI is given a store it cannot open,
 * so it works only if it never opens one.
 */
class TwoWays {
  private constructor(readonly dir: string, readonly gw: GatewayProcess) {}

  static async start(env: Record<string, string> = { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN }): Promise<TwoWays> {
    const dir = await Deno.makeTempDir();
    try {
      return new TwoWays(dir, await startGateway({ GATEWAY_KV: `${dir}/gateway.kv`, ...env }));
    } catch (error) {
      await Deno.remove(dir, { recursive: true });
      throw error;
    }
  }

  local(args: string[]): Promise<Run> {
    return adminCli({ GATEWAY_KV: `${this.dir}/local.kv`, GATEWAY_ADMIN_TOKEN: "" }, args);
  }

  remote(args: string[], env: Record<string, string> = { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN }): Promise<Run> {
    return adminCli({ GATEWAY_KV: `${this.dir}/absent/store.kv`, ...env }, [
      "--gateway",
      this.gw.url,
      ...args,
    ]);
  }

  /** A command through the API itself, as a script would send it. */
  post(argv: unknown, headers: Record<string, string> = { Authorization: `Bearer ${ADMIN_TOKEN}` }) {
    return fetch(`${this.gw.url}${COMMANDS_PATH}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ argv }),
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.gw.stop();
    await Deno.remove(this.dir, { recursive: true });
  }
}

/**
 * One side's output with what must differ between two stores made comparable: key ids, secrets and audit
 * record ids numbered by first appearance on that side, and times within two days of now as `<time>` (the
 * test's `--expires` lies years ahead and stays).
 */
class Normalizer {
  readonly #names = new Map<string, string>();

  #name(kind: string, value: string): string {
    let name = this.#names.get(value);
    if (!name) {
      name = `<${kind}${[...this.#names.values()].filter((n) => n.startsWith(`<${kind}`)).length + 1}>`;
      this.#names.set(value, name);
    }
    return name;
  }

  text(text: string): string {
    return text
      .replace(/gwk_[A-Za-z0-9_-]{8,}/g, (secret) => this.#name("secret", secret))
      .replace(/gwk_[A-Za-z0-9_-]{4}…/g, "<hint>")
      .replace(/key_[a-z0-9]+/g, (id) => this.#name("key", id))
      .replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, (id) => this.#name("record", id))
      .replace(
        /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z/g,
        (time) => Math.abs(Date.parse(time) - Date.now()) < 2 * DAY_MS ? "<time>" : time,
      );
  }
}

interface Row {
  args: string[];
  /** The exit status both ways must have: a failure compared with a failure proves little by itself. */
  code?: number;
  /** Names the id of the key this row creates, for later rows' `{name}`. */
  saves?: string;
  /** The audit trail, whose actor alone differs. */
  audit?: boolean;
}

const SINCE = new Date(Date.now() - DAY_MS).toISOString();

/** Every command of the operations contract's admin CLI, with every flag it lists, and `--help`. */
const CONTRACT: Row[] = [
  {
    args: [
      ...["server", "add", "--name", "gpu", "--url", "http://127.0.0.1:9", "--model", "m1=assistant"],
      ...["--model", "m2", "--weight", "2", "--kind", "ollama", "--max-ctx", "8192", "--max-predict", "512"],
      ...["--api-key", "server-secret-0123", "--disabled"],
    ],
  },
  {
    args: ["server", "add", "--name", "vllm", "--url", "http://127.0.0.1:10/v1", "--model", "m1"],
  },
  { args: ["server", "update", "vllm", "--kind", "openai", "--slots", "4", "--weight", "3"] },
  { args: ["server", "list"] },
  { args: ["server", "show", "gpu"] },
  { args: ["server", "enable", "gpu"] },
  { args: ["server", "disable", "vllm"] },
  { args: ["cluster", "add", "--name", "c1", "--server", "gpu"] },
  { args: ["cluster", "update", "c1", "--server", "gpu", "--server", "vllm"] },
  { args: ["cluster", "list"] },
  {
    args: [
      ...["user", "add", "--name", "alice", "--daily-tokens", "1000", "--weekly-tokens", "5000"],
      ...["--monthly-tokens", "20000", "--max-concurrent", "3"],
    ],
  },
  { args: ["user", "update", "alice", "--daily-tokens", "2000", "--weekly-tokens", "none"] },
  { args: ["user", "list"] },
  {
    args: [
      ...["key", "create", "--model", "m1", "--name", "docs team", "--cluster", "c1", "--user", "alice"],
      ...["--expires", "2031-01-01T00:00:00Z", "--rpm", "60", "--daily-tokens", "100", "--weekly-tokens"],
      ...["500", "--monthly-tokens", "2000", "--max-concurrent", "2", "--allow-ip", "10.0.0.0/8"],
      ...["--allow-ip", "192.168.1.5", "--allow-domain", "example.com", "--allow-domain", "*.example.org"],
      ...["--tools", "--vision", "--thinking", "--force-json", "--system-prompt", "Be brief."],
      ...["--max-ctx", "4096", "--max-predict", "256", "--default-ctx", "2048", "--default-predict", "128"],
      ...["--priority", "high"],
    ],
    saves: "docs",
  },
  { args: ["key", "create", "--model", "m2"], saves: "plain" },
  { args: ["key", "list"] },
  { args: ["key", "show", "{docs}"] },
  { args: ["key", "update", "{docs}", "--rpm", "30", "--no-tools", "--expires", "none", "--name", "docs"] },
  { args: ["key", "rotate", "{docs}", "--grace", "1h"] },
  { args: ["key", "rotate", "{plain}"] },
  { args: ["key", "revoke", "{plain}"] },
  { args: ["usage"] },
  { args: ["usage", "--key", "{docs}"] },
  { args: ["usage", "--user", "alice", "--since", SINCE, "--limit", "5"] },
  { args: ["audit"], audit: true },
  { args: ["audit", "--since", SINCE, "--limit", "3"], audit: true },
  { args: ["user", "remove", "alice"], code: 1 },
  { args: ["server", "remove", "vllm"], code: 1 },
  { args: ["key", "revoke", "{docs}"] },
  { args: ["cluster", "remove", "c1"] },
  { args: ["user", "remove", "alice"] },
  { args: ["server", "remove", "vllm"] },
  { args: ["server", "remove", "gpu"] },
  { args: ["key", "rotate", "--help"] },
];

/** Commands without `--json`: the text is the same both ways too. */
const TEXT: Row[] = [
  { args: ["server", "add", "--name", "gpu", "--url", "http://127.0.0.1:9", "--model", "m1"] },
  { args: ["key", "create", "--model", "m1", "--name", "text"], saves: "text" },
  { args: ["server", "list"] },
  { args: ["key", "show", "{text}"] },
  { args: ["key", "rotate", "{text}", "--grace", "0"] },
  { args: ["usage"] },
  { args: ["audit"], audit: true },
  { args: ["--help"] },
  { args: ["key", "--help"] },
  { args: ["key", "create", "--help"] },
];

/** Each side's ids of saved keys. */
type Saved = Record<string, string>;

function withSaved(args: string[], saved: Saved): string[] {
  return args.map((arg) => arg.replace(/^\{(\w+)\}$/, (_, name) => saved[name] ?? assert.fail(name)));
}

/** Audit JSON with the actor taken out, after checking it is this side's. */
function withoutActors(stdout: string, actor: Record<string, string>): string {
  const records = JSON.parse(stdout) as { actor: unknown }[];
  assert.ok(records.length > 0);
  for (const record of records) assert.deepEqual(record.actor, actor);
  return JSON.stringify(records.map((record) => ({ ...record, actor: "<actor>" })), null, 2);
}

/** Audit text with the actor column's words made the CLI's, and columns compared by order, not width. */
function withoutActorColumn(stdout: string, actor: string): string {
  const lines = stdout.trimEnd().split("\n");
  assert.ok(lines.length > 1 && lines.slice(1).every((line) => line.includes(`  ${actor}  `)), stdout);
  return lines.map((line) => line.replace(`  ${actor}  `, "  cli  ").replace(/ {2,}/g, "  ")).join("\n");
}

async function runBothWays(ways: TwoWays, rows: Row[], json: boolean): Promise<void> {
  const sides = {
    local: { saved: {} as Saved, names: new Normalizer() },
    remote: { saved: {} as Saved, names: new Normalizer() },
  };
  for (const row of rows) {
    const words = (saved: Saved) => [...withSaved(row.args, saved), ...(json ? ["--json"] : [])];
    const [local, remote] = await Promise.all([
      ways.local(words(sides.local.saved)),
      ways.remote(words(sides.remote.saved)),
    ]);
    const what = row.args.join(" ");
    assert.equal(local.code, row.code ?? 0, `${what}: ${local.stderr}`);
    assert.equal(remote.code, local.code, `${what}: ${remote.stderr}`);
    let [localOut, remoteOut] = [local.stdout, remote.stdout];
    if (row.audit) {
      [localOut, remoteOut] = json
        ? [
          withoutActors(localOut, { kind: "cli" }),
          withoutActors(remoteOut, { kind: "api", address: "127.0.0.1" }),
        ]
        : [withoutActorColumn(localOut, "cli"), withoutActorColumn(remoteOut, "api 127.0.0.1")];
    }
    assert.equal(sides.remote.names.text(remoteOut), sides.local.names.text(localOut), what);
    assert.equal(sides.remote.names.text(remote.stderr), sides.local.names.text(local.stderr), what);
    if (local.code === 0) {
      assert.equal(local.stderr, "", what);
      if (json) JSON.parse(local.stdout);
    } else {
      assert.equal(local.stdout, "", what);
      assert.match(local.stderr, /^admin: [^\n]+\n$/, what);
    }
    if (row.saves) {
      const id = (out: string) => json ? JSON.parse(out).id : /^Created key (key_\w+)\./.exec(out)![1];
      sides.local.saved[row.saves] = id(local.stdout);
      sides.remote.saved[row.saves] = id(remote.stdout);
    }
  }
}

Deno.test("every command of the contract prints and exits the same with --gateway as on the store", async () => {
  await using ways = await TwoWays.start();
  await runBothWays(ways, CONTRACT, true);
});

Deno.test("the contract's text output is the same with --gateway as on the store", async () => {
  await using ways = await TwoWays.start();
  await runBothWays(ways, TEXT, false);
});

Deno.test("the console test's bad inputs are refused the same over HTTP, and nothing is audited", async () => {
  await using ways = await TwoWays.start();
  const setup = [
    ["server", "add", "--name", "gpu", "--url", "http://127.0.0.1:9", "--model", "m1"],
    ["key", "create", "--model", "m1", "--json"],
  ];
  const ids: string[] = [];
  for (const side of [ways.local.bind(ways), ways.remote.bind(ways)]) {
    for (const args of setup) assert.equal((await side(args)).code, 0);
    ids.push(JSON.parse((await side(["key", "list", "--json"])).stdout)[0].id);
  }
  const cases = (id: string): string[][] => [
    ["key", "create"],
    ["key", "create", "--model", "has space"],
    ["key", "create", "--model", "m1", "--rpm", "0"],
    ["key", "create", "--model", "m1", "--allow-ip", "10.0.0.300"],
    ["key", "create", "--model", "m1", "--cluster", "ghost"],
    ["key", "create", "--model", "m1", "--max-ctx", "4096", "--default-ctx", "9000"],
    ["key", "create", "--model", "m1", "--expires", "tomorrow"],
    ["key", "rotate", id, "--grace", "1w"],
    ["key", "update", id],
    ["key", "revoke", "key_nope"],
    ["server", "add", "--name", "s1", "--url", "ftp://x", "--model", "m1"],
    ["server", "add", "--name", "bad name", "--url", "http://x", "--model", "m1"],
    ["server", "add", "--name", "gpu", "--url", "http://x", "--model", "m1"],
    ["server", "remove", "ghost"],
    ["cluster", "add", "--name", "c1", "--server", "ghost"],
    ["user", "add", "--name", "none"],
    ["user", "update", "ghost", "--daily-tokens", "5"],
  ];
  const [local, remote] = [cases(ids[0]), cases(ids[1])];
  assert.equal(local.length, 17);
  for (let i = 0; i < local.length; i++) {
    const what = local[i].join(" ");
    const [mine, theirs] = await Promise.all([ways.local(local[i]), ways.remote(remote[i])]);
    assert.notEqual(mine.code, 0, what);
    assert.equal(mine.stdout, "", what);
    assert.deepEqual({ ...theirs, stderr: theirs.stderr.replaceAll(ids[1], ids[0]) }, mine, what);
    // The API's own answer: the CLI's line, its exit status, and the console's HTTP status for it.
    const answer = await ways.post(remote[i]);
    const body = CommandFailure.parse(await answer.json());
    assert.equal(answer.status, mine.code === 2 ? 422 : 409, what);
    assert.deepEqual([body.exitCode, body.stderr], [mine.code, theirs.stderr.trimEnd()], what);
    assert.equal(`admin: ${local[i][0]} ${local[i][1]}: ${body.error.message}`, body.stderr);
  }
  for (const side of [ways.local.bind(ways), ways.remote.bind(ways)]) {
    const audit = JSON.parse((await side(["audit", "--json"])).stdout);
    assert.deepEqual(audit.map((r: { action: string }) => r.action), ["key.create", "server.add"]);
  }
});

Deno.test("a wrong or missing admin token is refused with 401, changes nothing and is not audited", async () => {
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

  for (const args of [["server", "list", "--json"], ["audit", "--json"]]) {
    const run = await ways.remote(args);
    assert.deepEqual([run.code, JSON.parse(run.stdout)], [0, []], args.join(" "));
  }
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
