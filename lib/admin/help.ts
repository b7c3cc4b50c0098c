/**
 * @module `--help`: what the CLI accepts, read from the same tables it parses with, so the help cannot name a
 * flag the command refuses or miss one it takes. What each flag does is the README's and the operations
 * contract's to say.
 */
import type { FlagSpec, Noun, Verb } from "./command.ts";

export const HELP_FLAGS = new Set(["--help", "-h"]);

const PROGRAM = "deno task admin [--gateway URL [--token TOKEN]]";
const COMMON = "Every command takes --json (print one JSON value) and --help.";

function flagLines(flags: Record<string, FlagSpec>): string[] {
  const shown = Object.entries(flags).map(([name, spec]) => [
    spec.type === "string" ? `--${name} VALUE` : `--${name}`,
    spec.multiple ? "repeatable" : "",
  ]);
  shown.push(["--json", "print one JSON value"]);
  const width = Math.max(...shown.map(([flag]) => flag.length));
  return shown.map(([flag, note]) => `  ${note ? `${flag.padEnd(width)}  ${note}` : flag}`);
}

function verbUsage(verb: Verb): string {
  return [verb.operand, Object.keys(verb.flags).length ? "[flags]" : ""].filter(Boolean).join(" ");
}

/** The help for the command that `words` (the command line without its help flag) begins with. */
export function helpText(
  words: string[],
  nouns: Record<string, Noun>,
  singles: Record<string, Verb>,
): string {
  const [nounWord, verbWord] = words;
  const single = nounWord !== undefined && Object.hasOwn(singles, nounWord) ? singles[nounWord] : undefined;
  const noun = nounWord !== undefined && Object.hasOwn(nouns, nounWord) ? nouns[nounWord] : undefined;
  const verb = single ??
    (noun && verbWord !== undefined && Object.hasOwn(noun, verbWord) ? noun[verbWord] : undefined);
  if (verb) {
    const command = single ? nounWord : `${nounWord} ${verbWord}`;
    return [`${PROGRAM} ${command} ${verbUsage(verb)}`.trimEnd(), "", "Flags:", ...flagLines(verb.flags)]
      .join("\n");
  }
  if (noun) {
    const verbs = Object.entries(noun).map(([name, v]) => `  ${nounWord} ${name} ${verbUsage(v)}`.trimEnd());
    return [`${PROGRAM} ${nounWord} <verb> ...`, "", "Verbs:", ...verbs, "", COMMON].join("\n");
  }
  const commands = [
    ...Object.entries(nouns).map(([name, n]) => `  ${name} ${Object.keys(n).join("|")}`),
    ...Object.keys(singles).map((name) => `  ${name}`),
  ];
  return [`${PROGRAM} <command> [flags]`, "", "Commands:", ...commands, "", COMMON].join("\n");
}
