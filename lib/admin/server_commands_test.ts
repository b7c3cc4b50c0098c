/** @module `admin server …` through `runAdmin`: defaults, validation, API key hiding and removal rules. */
import assert from "node:assert/strict";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

const GPU = [
  "server",
  "add",
  "--name",
  "gpu1",
  "--url",
  "http://10.0.0.5:11434/",
  "--model",
  "llama3.1:8b=llama",
];

Deno.test("server add applies defaults and prints one JSON record", async () => {
  using admin = await AdminHarness.open();
  const server = await admin.json(...GPU, "--model", "qwen2");
  assert.equal(server.name, "gpu1");
  assert.equal(server.url, "http://10.0.0.5:11434");
  assert.equal(server.kind, "ollama");
  assert.equal(server.weight, 1);
  assert.equal(server.enabled, true);
  assert.equal(server.hasApiKey, false);
  assert.deepEqual(server.models, [{ tag: "llama3.1:8b", alias: "llama" }, { tag: "qwen2" }]);
  assert.equal(server.createdAt, admin.now.toISOString());
});

Deno.test("server add takes every optional flag", async () => {
  using admin = await AdminHarness.open();
  const server = await admin.json(
    "server",
    "add",
    "--name=oai",
    "--url=https://api.example.com/v1",
    "--model=gpt-4o",
    "--kind=openai",
    "--weight=3",
    "--max-ctx=8192",
    "--max-predict=1024",
    "--api-key=sk-secret",
    "--disabled",
  );
  assert.equal(server.kind, "openai");
  assert.equal(server.weight, 3);
  assert.equal(server.maxCtx, 8192);
  assert.equal(server.maxPredict, 1024);
  assert.equal(server.enabled, false);
  assert.equal(server.hasApiKey, true);
  assert.equal("apiKey" in server, false);
});

Deno.test("server outputs never contain the API key", async () => {
  using admin = await AdminHarness.open();
  await admin.json(...GPU, "--api-key", "sk-very-secret");
  for (const args of [["server", "list"], ["server", "show", "gpu1"], ["server", "disable", "gpu1"]]) {
    assert.doesNotMatch((await admin.run(...args)).out.join(), /sk-very-secret/);
    assert.doesNotMatch((await admin.run(...args, "--json")).out.join(), /sk-very-secret/);
  }
  assert.match(await admin.human("server", "show", "gpu1"), /^apiKey: +set$/m);
  assert.equal((await admin.json("server", "show", "gpu1")).hasApiKey, true);
});

Deno.test("server add rejects bad values with exit 2", async () => {
  using admin = await AdminHarness.open();
  const cases: [string[], RegExp][] = [
    [["--weight", "x"], /--weight must be a positive integer, got "x"/],
    [["--weight", "0"], /--weight must be a positive integer/],
    [["--weight=-1"], /--weight must be a positive integer/],
    [["--weight", "1.5"], /--weight/],
    [["--max-ctx", "abc"], /--max-ctx must be a positive integer or "none"/],
    [["--kind", "vllm"], /--kind must be one of ollama, openai/],
    [["--model", "=alias"], /--model must be TAG or TAG=ALIAS/],
    [["--model", "llama"], /--model names "llama" more than once/],
  ];
  for (const [extra, reason] of cases) {
    assert.match(await admin.fails(2, ...GPU, ...extra), reason);
  }
  const base = ["server", "add", "--name", "s", "--model", "m"];
  assert.match(await admin.fails(2, ...base, "--url", "ftp://host"), /--url must use http or https/);
  assert.match(await admin.fails(2, ...base, "--url", "not a url"), /--url must be an absolute/);
  assert.match(await admin.fails(2, ...base, "--url", "http://u:p@host"), /credentials/);
  assert.match(await admin.fails(2, ...base), /--url is required/);
  assert.match(
    await admin.fails(2, "server", "add", "--name", "s", "--url", "http://h"),
    /--model is required/,
  );
  assert.match(
    await admin.fails(2, "server", "add", "--url", "http://h", "--model", "m"),
    /--name is required/,
  );
  assert.match(await admin.fails(2, ...GPU.with(3, "none")), /--name cannot be "none"/);
  assert.match(await admin.fails(2, ...GPU.with(3, "has space")), /--name must be/);
  assert.deepEqual(await admin.json("server", "list"), []);
});

Deno.test("server add refuses a duplicate name with exit 1", async () => {
  using admin = await AdminHarness.open();
  await admin.json(...GPU);
  assert.match(await admin.fails(1, ...GPU), /^admin: server add: A server named "gpu1" already exists$/);
});

Deno.test("server list prints a table, or a note when empty", async () => {
  using admin = await AdminHarness.open();
  assert.equal(await admin.human("server", "list"), "No servers.");
  await admin.json(...GPU);
  await admin.json(
    "server",
    "add",
    "--name",
    "b",
    "--url",
    "https://b.example",
    "--model",
    "m",
    "--disabled",
  );
  const lines = (await admin.human("server", "list")).split("\n");
  assert.match(lines[0], /^NAME +KIND +URL +MODELS +WEIGHT +STATUS$/);
  assert.match(lines[1], /^b +ollama +https:\/\/b\.example +m +1 +disabled$/);
  assert.match(lines[2], /^gpu1 +ollama +http:\/\/10\.0\.0\.5:11434 +llama3\.1:8b=llama +1 +enabled$/);
  assert.equal(lines[0].indexOf("KIND"), lines[1].indexOf("ollama"));
  const listed = await admin.json("server", "list");
  assert.deepEqual(listed.map((s: { name: string }) => s.name), ["b", "gpu1"]);
});

Deno.test("server show prints key: value lines; unknown name exits 1", async () => {
  using admin = await AdminHarness.open();
  await admin.json(...GPU);
  const text = await admin.human("server", "show", "gpu1");
  assert.match(text, /^name: +gpu1$/m);
  assert.match(text, /^models: +llama3\.1:8b=llama$/m);
  assert.match(text, /^maxCtx: +-$/m);
  assert.match(
    await admin.fails(1, "server", "show", "nope"),
    /^admin: server show: No server named "nope"$/,
  );
  assert.match(await admin.fails(2, "server", "show"), /missing NAME/);
  assert.match(await admin.fails(2, "server", "show", "a", "b"), /unexpected argument "b"/);
});

Deno.test("server update replaces given fields, keeps others and clears with none", async () => {
  using admin = await AdminHarness.open();
  await admin.json(...GPU, "--model", "qwen2", "--max-ctx", "4096", "--api-key", "k", "--weight", "2");
  const updated = await admin.json(
    "server",
    "update",
    "gpu1",
    "--model",
    "mistral",
    "--max-predict",
    "512",
    "--max-ctx",
    "none",
    "--api-key",
    "none",
  );
  assert.deepEqual(updated.models, [{ tag: "mistral" }]);
  assert.equal(updated.maxPredict, 512);
  assert.equal("maxCtx" in updated, false);
  assert.equal(updated.hasApiKey, false);
  assert.equal(updated.weight, 2);
  assert.equal(updated.url, "http://10.0.0.5:11434");
  assert.equal((await admin.json("server", "update", "gpu1", "--disabled")).enabled, false);
  assert.equal((await admin.json("server", "update", "gpu1", "--enabled")).enabled, true);
  assert.match(await admin.fails(2, "server", "update", "gpu1", "--enabled", "--disabled"), /contradict/);
  assert.match(await admin.fails(2, "server", "update", "gpu1", "--weight", "none"), /--weight must be/);
  assert.match(await admin.fails(2, "server", "update", "gpu1"), /nothing to change/);
  assert.match(await admin.fails(2, "server", "update", "gpu1", "--name", "x"), /NAME given twice/);
  assert.match(await admin.fails(1, "server", "update", "nope", "--weight", "2"), /No server named "nope"/);
});

Deno.test("server enable and disable flip the flag", async () => {
  using admin = await AdminHarness.open();
  await admin.json(...GPU);
  assert.equal((await admin.json("server", "disable", "gpu1")).enabled, false);
  assert.match(await admin.human("server", "enable", "gpu1"), /^Server "gpu1" enabled\.\n/);
  assert.equal((await admin.json("server", "show", "gpu1")).enabled, true);
  assert.match(await admin.fails(1, "server", "disable", "nope"), /No server named "nope"/);
});

Deno.test("server remove deletes, but not while a cluster lists the server", async () => {
  using admin = await AdminHarness.open();
  await admin.json(...GPU);
  await admin.json("cluster", "add", "--name", "c1", "--server", "gpu1");
  assert.match(await admin.fails(1, "server", "remove", "gpu1"), /is a member of cluster\(s\) c1/);
  await admin.json("cluster", "update", "c1", "--server", "none");
  assert.equal((await admin.json("server", "remove", "gpu1")).name, "gpu1");
  assert.deepEqual(await admin.json("server", "list"), []);
  assert.match(await admin.fails(1, "server", "remove", "gpu1"), /No server named "gpu1"/);
});

Deno.test("server --slots: set on add, changed and cleared on update, refused when not a positive integer", async () => {
  using admin = await AdminHarness.open();
  assert.equal((await admin.json(...GPU, "--slots", "2")).slots, 2);
  assert.match(await admin.human("server", "show", "gpu1"), /^slots: +2$/m);
  assert.equal((await admin.json("server", "update", "gpu1", "--slots", "8")).slots, 8);
  assert.equal("slots" in await admin.json("server", "update", "gpu1", "--slots", "none"), false);
  for (const bad of ["0", "-1", "two"]) {
    const res = await admin.run("server", "update", "gpu1", `--slots=${bad}`);
    assert.equal(res.code, 2);
    assert.match(res.err.join(), /--slots must be a positive integer/);
  }
});
