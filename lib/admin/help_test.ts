/** @module `--help` for the CLI, each noun and each command: exit 0, and only flags the command accepts. */
import assert from "node:assert/strict";
import { AdminHarness } from "./test_harness.ts";
import { NOUNS } from "./execute.ts";

Deno.test("--help alone, after a noun and after each command lists what the parser accepts", async () => {
  using admin = await AdminHarness.open();
  const top = await admin.human("--help");
  for (const noun of [...Object.keys(NOUNS), "usage", "audit"]) {
    assert.match(top, new RegExp(`^  ${noun}\\b`, "m"));
  }
  assert.equal(await admin.human("-h"), top);
  assert.equal(await admin.human("nosuch", "--help"), top, "an unknown command gets the overview");
  const commands = [
    ...Object.entries(NOUNS).flatMap(([noun, verbs]) => Object.keys(verbs).map((verb) => [noun, verb])),
    ["usage"],
    ["audit"],
  ];
  for (const words of commands) {
    const text = await admin.human(...words, "--help");
    assert.match(text, new RegExp(`^deno task admin .* ${words.join(" ")}\\b`), words.join(" "));
    const flags = [...text.matchAll(/^ {2}(--[\w-]+)( VALUE)?/gm)];
    assert.ok(flags.some(([, flag]) => flag === "--json"), words.join(" "));
    for (const [, flag, value] of flags) {
      // Naming the flag with a value gets past the parser: any refusal is about values, not the flag.
      const run = await admin.run(...words, "X", flag, ...(value ? ["1"] : []));
      assert.doesNotMatch(
        run.err.join("\n"),
        /unknown flag|takes no value|needs a value/,
        `${words} ${flag}`,
      );
    }
    const json = await admin.json(...words, "--help");
    assert.equal(json, text, "under --json the help is one JSON string");
  }
  for (const [noun, verbs] of Object.entries(NOUNS)) {
    const text = await admin.human(noun, "--help");
    for (const verb of Object.keys(verbs)) assert.match(text, new RegExp(`^  ${noun} ${verb}\\b`, "m"));
  }
});
