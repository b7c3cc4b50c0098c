/** @module Reading `--gateway` and `--token` off the front of the command line. */
import assert from "node:assert/strict";
import { cliRequest } from "./gateway_target.ts";
import { UsageError } from "./flags.ts";

Deno.test("without --gateway the command line is the store's, whatever the environment holds", () => {
  assert.deepEqual(cliRequest(["key", "list"], "env-token"), { args: ["key", "list"] });
  // After the command they are the command's flags (and refused there as unknown).
  assert.deepEqual(cliRequest(["key", "list", "--gateway", "x"], undefined), {
    args: ["key", "list", "--gateway", "x"],
  });
});

Deno.test("--gateway and --token lead, in either order and either spelling; --token wins over the env", () => {
  const forms = [
    ["--gateway", "https://gw.example", "--token", "t1", "key", "list"],
    ["--token=t1", "--gateway=https://gw.example", "key", "list"],
  ];
  for (const args of forms) {
    const { target, args: rest } = cliRequest(args, "env-token");
    assert.equal(target?.base.href, "https://gw.example/");
    assert.equal(target?.token, "t1");
    assert.deepEqual(rest, ["key", "list"]);
  }
  const fromEnv = cliRequest(["--gateway", "http://10.0.0.1:8000/gw", "usage"], "env-token");
  assert.equal(fromEnv.target?.token, "env-token");
  assert.equal(fromEnv.target?.base.href, "http://10.0.0.1:8000/gw/", "a path prefix is kept");
});

Deno.test("a wrong --gateway or --token is a usage error naming it", () => {
  const cases: [string[], string | undefined, RegExp][] = [
    [["--gateway"], "t", /^--gateway needs a value$/],
    [
      ["--gateway", "--token", "t", "key", "list"],
      undefined,
      /--gateway needs a value \(write --gateway=VALUE/,
    ],
    [
      ["--gateway", "gw.example", "key", "list"],
      "t",
      /--gateway must be the gateway's http or https address/,
    ],
    [["--gateway", "ftp://gw.example", "key", "list"], "t", /http or https address, got "ftp:/],
    [["--gateway", "https://u:p@gw.example", "key", "list"], "t", /without user, query or fragment/],
    [["--gateway", "https://gw.example", "--gateway", "https://b", "key"], "t", /--gateway given twice/],
    [["--token", "t", "key", "list"], undefined, /--token is for --gateway/],
    [
      ["--gateway", "https://gw.example", "key", "list"],
      undefined,
      /needs the admin token: --token TOKEN, or/,
    ],
    [["--gateway", "https://gw.example", "key", "list"], " ", /needs the admin token/],
  ];
  for (const [args, env, message] of cases) {
    assert.throws(() => cliRequest(args, env), (e) => e instanceof UsageError && message.test(e.message));
  }
});
