/**
 * The admin CLI driven over HTTP: `deno task admin --gateway URL` against a running gateway process prints and
 * exits exactly as `deno task admin` on a store file does, for every command of the operations contract and
 * for the console test's bad inputs; only the audit trail's actor differs (`api` and the caller's address
 * instead of `cli`). The API's access, errors, secrets, OpenAPI document and the README's `--gateway`
 * commands are in admin_http_api_test.ts.
 */
import assert from "node:assert/strict";
import { CommandFailure } from "../lib/admin/http_wire.ts";
import { TwoWays } from "./support/admin_two_ways.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

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
