/** @module Dispatch and the output contract shared by all verbs, plus one run of the real `deno task admin`. */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runAdmin } from "./cli.ts";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

Deno.test("unknown or missing command and verb are usage errors", async () => {
  using admin = await AdminHarness.open();
  assert.equal(
    await admin.fails(2, "usages", "--json"),
    'admin: unknown command "usages" (expected one of server, cluster, user, key, usage, audit)',
  );
  assert.match(
    await admin.fails(2),
    /^admin: missing command \(expected one of server, cluster, user, key, usage, audit\)$/,
  );
  assert.match(await admin.fails(2, "server"), /^admin: server: missing verb \(expected one of add, list,/);
  assert.match(await admin.fails(2, "key", "delete"), /^admin: key: unknown verb "delete" \(expected one of/);
  assert.match(await admin.fails(2, "constructor", "x"), /unknown command "constructor"/);
});

Deno.test("flag syntax errors are one-line usage errors", async () => {
  using admin = await AdminHarness.open();
  assert.match(
    await admin.fails(2, "server", "list", "--bogus"),
    /^admin: server list: unknown flag --bogus \(accepted: --json\)$/,
  );
  assert.match(await admin.fails(2, "user", "add", "--name"), /^admin: user add: --name needs a value$/);
  assert.match(
    await admin.fails(2, "user", "add", "--name", "--json"),
    /--name needs a value \(write --name=VALUE/,
  );
  assert.match(await admin.fails(2, "server", "list", "--json=yes"), /--json takes no value/);
  assert.match(await admin.fails(2, "user", "list", "extra"), /unexpected argument "extra"/);
  assert.match(await admin.fails(2, "user", "add", "-n", "x"), /unknown flag -n/);
});

Deno.test("--json may come anywhere and yields exactly one JSON value", async () => {
  using admin = await AdminHarness.open();
  const run = await admin.run("user", "add", "--json", "--name", "alice");
  assert.equal(run.code, 0);
  assert.equal(run.out.length, 1);
  assert.equal(JSON.parse(run.out[0]).name, "alice");
  for (const args of [["user", "list"], ["server", "list"], ["cluster", "list"], ["key", "list"]]) {
    const { out } = await admin.run(...args, "--json");
    assert.ok(Array.isArray(JSON.parse(out.join("\n"))));
  }
});

Deno.test("store failures exit 1 with one line and no stack trace", async () => {
  const kv = await Deno.openKv(":memory:");
  kv.close();
  const err: string[] = [];
  const code = await runAdmin(["user", "list"], { kv, out: () => {}, err: (s) => err.push(s) });
  assert.equal(code, 1);
  assert.equal(err.length, 1);
  assert.match(err[0], /^admin: user list: failed: /);
  assert.doesNotMatch(err[0], /\n/);
});

Deno.test("a GATEWAY_KV whose folder does not exist is refused in one line, and nothing is created", async () => {
  const repo = fileURLToPath(new URL("../../", import.meta.url));
  const dir = await Deno.makeTempDir({ prefix: "admin_cli_test_" });
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "admin", "user", "list"],
      env: { GATEWAY_KV: `${dir}/typo/gateway.kv`, NO_COLOR: "1" },
      cwd: repo,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr).trim();
    assert.equal(output.code, 1);
    assert.match(
      stderr,
      /^admin: cannot open the store .*typo\/gateway\.kv: the folder .*typo does not exist/,
    );
    assert.equal(stderr.split("\n").length, 1);
    await assert.rejects(Deno.stat(`${dir}/typo`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task admin works end to end on a KV file", async () => {
  const repo = fileURLToPath(new URL("../../", import.meta.url));
  const dir = await Deno.makeTempDir({ prefix: "admin_cli_test_" });
  const admin = async (...args: string[]) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "admin", ...args],
      env: { GATEWAY_KV: `${dir}/gateway.kv`, NO_COLOR: "1" },
      cwd: repo,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
  };
  try {
    const added = await admin(
      ...["server", "add", "--name", "gpu1", "--url", "http://127.0.0.1:11434", "--model", "llama3=l3"],
      "--json",
    );
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.stderr, "");
    assert.equal(JSON.parse(added.stdout).name, "gpu1");

    const listed = await admin("server", "list", "--json");
    assert.equal(listed.code, 0, listed.stderr);
    const servers = JSON.parse(listed.stdout);
    assert.deepEqual(servers.map((s: { name: string }) => s.name), ["gpu1"]);
    assert.deepEqual(servers[0].models, [{ tag: "llama3", alias: "l3" }]);

    const bad = await admin("server", "list", "--bogus");
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, "");
    assert.equal(bad.stderr.trimEnd(), "admin: server list: unknown flag --bogus (accepted: --json)");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
