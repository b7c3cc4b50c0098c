/**
 * @module `--help` for the CLI, each noun and each command: exit 0, only flags the command accepts, and a phrase
 * saying what each command and each flag does.
 */
import assert from "node:assert/strict";
import { AdminHarness } from "../../tests/support/admin_harness.ts";
import { NOUN_HELP, NOUNS } from "./execute.ts";

const COMMANDS = [
  ...Object.entries(NOUNS).flatMap(([noun, verbs]) => Object.keys(verbs).map((verb) => [noun, verb])),
  ["usage"],
  ["audit"],
];

/** The help with each wrapped description joined back onto its line. */
function unwrapped(text: string): string {
  return text.replace(/\n {6,}/g, " ");
}

/** A flag line: two spaces, the flag, its value's shape if it takes one, then at least two spaces and what it does. */
const FLAG_LINE = /^ {2}(--[\w-]+)(?: (\S+))? {2,}(\S.*)$/;

Deno.test("--help alone, after a noun and after each command lists what the parser accepts", async () => {
  using admin = await AdminHarness.open();
  const top = await admin.human("--help");
  for (const noun of [...Object.keys(NOUNS), "usage", "audit"]) {
    assert.match(top, new RegExp(`^  ${noun}\\b`, "m"));
  }
  assert.equal(await admin.human("-h"), top);
  assert.equal(await admin.human("nosuch", "--help"), top, "an unknown command gets the overview");
  for (const words of COMMANDS) {
    const text = await admin.human(...words, "--help");
    assert.match(text, new RegExp(`^deno task admin .* ${words.join(" ")}\\b`), words.join(" "));
    const flags = text.split("\n").map((line) => FLAG_LINE.exec(line)).filter((m) => m !== null);
    assert.ok(flags.some(([, flag]) => flag === "--json"), words.join(" "));
    for (const [, flag, value] of flags) {
      if (flag === "--help") continue;
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

Deno.test("help says what every command and every flag does, and `help` is --help", async () => {
  using admin = await AdminHarness.open();
  const top = unwrapped(await admin.human("help"));
  assert.equal(top, unwrapped(await admin.human("--help")));
  for (const [noun, phrase] of Object.entries(NOUN_HELP)) {
    assert.ok(phrase.length > 10, noun);
    assert.match(top, new RegExp(`^  ${noun} \\S+ +${phrase}$`, "m"));
  }
  assert.deepEqual(Object.keys(NOUN_HELP).sort(), Object.keys(NOUNS).sort());
  for (const words of COMMANDS) {
    const wrapped = await admin.human(...words, "--help");
    assert.equal(await admin.human("help", ...words), wrapped, `help ${words.join(" ")}`);
    for (const line of wrapped.split("\n")) assert.ok(line.length <= 110, `${words.join(" ")}: ${line}`);
    const text = unwrapped(wrapped);
    const [usage, blank, summary] = text.split("\n");
    assert.match(usage, /^deno task admin /);
    assert.equal(blank, "");
    assert.match(summary, /^[A-Z].{10,}\.$/, `${words.join(" ")} says what it does`);
    const lines = text.slice(text.indexOf("\nFlags:\n") + 8).split("\n");
    assert.ok(lines.length >= 2, words.join(" "));
    for (const line of lines) {
      const match = FLAG_LINE.exec(line);
      assert.ok(match, `${words.join(" ")}: ${JSON.stringify(line)} names a flag and says what it does`);
      assert.ok(match[3].length > 8, `${words.join(" ")} ${match[1]}: ${match[3]}`);
    }
  }
  assert.match(
    unwrapped(await admin.human("key", "create", "--help")),
    /^ {2}--model TAG +the model the key may use.*$/m,
  );
  assert.match(
    unwrapped(await admin.human("server", "add", "--help")),
    /^ {2}--model TAG\[=ALIAS\] .*\[repeatable\]$/m,
  );
  assert.match(await admin.human("server", "update", "--help"), /^NAME may also be given as --name NAME\.$/m);
});
