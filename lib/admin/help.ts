/**
 * @module `--help` (and `help`): what the CLI accepts and what each part does, read from the same tables it
 * parses with, so the help cannot name a flag the command refuses, miss one it takes, or leave one unexplained
 * (a flag's type and its description are one entry).
 */
import type { FlagSpec, Noun, Verb } from "./command.ts";

export const HELP_FLAGS = new Set(["--help", "-h"]);
/** `admin help [COMMAND…]` is `admin [COMMAND…] --help`. */
export const HELP_WORD = "help";

const PROGRAM = "deno task admin [--gateway URL [--token TOKEN]]";
const COMMON = [
  "Every command takes --json (print one JSON value) and --help. A flag is given once, except those marked",
  "repeatable. Where a command takes NAME or ID, --name NAME or --id ID says the same.",
].join("\n");

/** The commands there are, for the overview: nouns with their verbs, and the commands that are a noun alone. */
export interface HelpTables {
  nouns: Record<string, Noun>;
  /** What each noun is, in a phrase. */
  nounHelp: Record<string, string>;
  singles: Record<string, Verb>;
}

/** Help lines are wrapped to this width, so that they read in a terminal of ordinary size. */
const WIDTH = 110;

/** `text` in lines of at most `width` characters, broken between words. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

/**
 * Two columns: what is typed, and what it means; the second starts at the same place on every line and wraps
 * under itself.
 */
function columns(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  const indent = " ".repeat(width + 4);
  return rows.flatMap(([left, right]) => {
    const [first, ...more] = wrap(right, Math.max(WIDTH - indent.length, 30));
    return [`  ${left.padEnd(width)}  ${first}`.trimEnd(), ...more.map((line) => indent + line)];
  });
}

function flagRows(flags: Record<string, FlagSpec>): [string, string][] {
  const rows = Object.entries(flags).map(([name, spec]): [string, string] => [
    spec.type === "string" ? `--${name} ${spec.value ?? "VALUE"}` : `--${name}`,
    spec.multiple ? `${spec.help} [repeatable]` : spec.help,
  ]);
  rows.push(["--json", "print one JSON value instead of text"], ["--help", "print this help"]);
  return rows;
}

function verbUsage(verb: Verb): string {
  return [verb.operand, Object.keys(verb.flags).length ? "[flags]" : ""].filter(Boolean).join(" ");
}

function sentence(phrase: string): string {
  return `${phrase[0].toUpperCase()}${phrase.slice(1)}.`;
}

function verbHelp(command: string, verb: Verb): string {
  const lines = [`${PROGRAM} ${command} ${verbUsage(verb)}`.trimEnd(), "", sentence(verb.help)];
  const operandFlag = verb.operand?.toLowerCase();
  if (verb.operand && operandFlag && !Object.hasOwn(verb.flags, operandFlag)) {
    lines.push(`${verb.operand} may also be given as --${operandFlag} ${verb.operand}.`);
  }
  lines.push("", "Flags:", ...columns(flagRows(verb.flags)));
  return lines.join("\n");
}

/** The help for the command that `words` (the command line without its help flag) begins with. */
export function helpText(words: string[], tables: HelpTables): string {
  const { nouns, nounHelp, singles } = tables;
  const [nounWord, verbWord] = words;
  const single = nounWord !== undefined && Object.hasOwn(singles, nounWord) ? singles[nounWord] : undefined;
  const noun = nounWord !== undefined && Object.hasOwn(nouns, nounWord) ? nouns[nounWord] : undefined;
  const verb = single ??
    (noun && verbWord !== undefined && Object.hasOwn(noun, verbWord) ? noun[verbWord] : undefined);
  if (verb) return verbHelp(single ? nounWord : `${nounWord} ${verbWord}`, verb);
  if (noun) {
    const verbs = columns(
      Object.entries(noun).map(([name, v]) => [`${nounWord} ${name} ${verbUsage(v)}`.trimEnd(), v.help]),
    );
    return [
      `${PROGRAM} ${nounWord} <verb> ...`,
      "",
      sentence(nounHelp[nounWord]),
      "",
      "Verbs:",
      ...verbs,
      "",
      COMMON,
    ]
      .join("\n");
  }
  const commands = columns([
    ...Object.entries(nouns).map(([name, n]): [string, string] => [
      `${name} ${Object.keys(n).join("|")}`,
      nounHelp[name],
    ]),
    ...Object.entries(singles).map(([name, v]): [string, string] => [name, v.help]),
  ]);
  return [
    `${PROGRAM} <command> [flags]`,
    "",
    "Commands:",
    ...commands,
    "",
    COMMON,
    "deno task admin COMMAND --help (or deno task admin help COMMAND) shows what a command takes.",
  ].join("\n");
}
