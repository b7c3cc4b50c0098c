/**
 * @module One admin command line, run to its outcome: what the CLI prints on stdout or the one line it prints on
 * stderr, and its exit status. The CLI against the store prints the outcome; the admin HTTP API sends it to a
 * CLI run with `--gateway`, which prints it the same way. So both ways parse, validate, refuse and answer by
 * this one function, and only who the audit trail names as the actor differs.
 */
import { parseArgs } from "node:util";
import type { Actor } from "../audit/mod.ts";
import { RecordError } from "../store/record_error.ts";
import type { Noun, Verb } from "./command.ts";
import { FlagReader, UsageError } from "./flags.ts";
import { parseArgsProblem } from "./parse_problem.ts";
import { USAGE_COMMAND } from "./usage_commands.ts";
import { AUDIT_COMMAND } from "./audit_command.ts";
import { commandContext, execute, NOUN_HELP, NOUNS } from "./execute.ts";
import { HELP_FLAGS, HELP_WORD, helpText } from "./help.ts";

/** Commands that take no verb: the word after the command is already a flag. */
const SINGLE_COMMANDS: Record<string, Verb> = {
  usage: USAGE_COMMAND,
  audit: AUDIT_COMMAND,
};

/** Why a command line failed: it was wrong (exit 2), the store refused it, or something broke (both exit 1). */
export type Problem = "usage" | "refused" | "failed";

export type CommandOutcome =
  /** `stdout` is the text printed (the JSON value under `--json`); `result` is that value as data. */
  | { exitCode: 0; stdout: string; result: unknown }
  /** `stderr` is the line printed; `reason` is that line without the `admin: noun verb: ` it starts with. */
  | { exitCode: 1 | 2; stderr: string; reason: string; problem: Problem };

export interface CommandEnv {
  kv: Deno.Kv;
  now: () => Date;
  actor: Actor;
}

function choose<T>(table: Record<string, T>, word: string | undefined, what: string): T {
  const expected = `expected one of ${Object.keys(table).join(", ")}`;
  if (word === undefined) throw new UsageError(`missing ${what} (${expected})`);
  if (!Object.hasOwn(table, word)) {
    throw new UsageError(`unknown ${what} ${JSON.stringify(word)} (${expected})`);
  }
  return table[word];
}

/** The flag that may stand for a verb's operand (`--name` for NAME), unless the verb uses that flag already. */
function operandFlag(verb: Verb): string | undefined {
  const flag = verb.operand?.toLowerCase();
  return flag !== undefined && !Object.hasOwn(verb.flags, flag) ? flag : undefined;
}

type ParseOptions = Record<string, { type: "string" | "boolean"; multiple: boolean }>;

/** A flag given twice would silently lose its first value; only lists may be built up that way. */
function refuseRepeats(tokens: { kind: string; name?: string }[], options: ParseOptions): void {
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== "option" || token.name === undefined || options[token.name]?.multiple) continue;
    if (seen.has(token.name)) {
      throw new UsageError(`--${token.name} given twice (give it once; only repeatable flags take several)`);
    }
    seen.add(token.name);
  }
}

function parse(verb: Verb, args: string[]): { flags: FlagReader; json: boolean; operand: string } {
  const byFlag = operandFlag(verb);
  const options: ParseOptions = {};
  for (const [name, spec] of Object.entries(verb.flags)) {
    options[name] = { type: spec.type, multiple: spec.multiple === true };
  }
  if (byFlag) options[byFlag] = { type: "string", multiple: false };
  options.json = { type: "boolean", multiple: false };
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true, tokens: true });
  } catch (error) {
    throw parseArgsProblem(error, Object.keys(options)) ?? error;
  }
  const { values, positionals, tokens } = parsed;
  refuseRepeats(tokens, options);
  let operands = positionals;
  if (byFlag) {
    const named = values[byFlag];
    delete values[byFlag];
    if (typeof named === "string" && positionals.length) {
      throw new UsageError(
        `${verb.operand} given twice (as ${JSON.stringify(positionals[0])} and as --${byFlag})`,
      );
    }
    if (typeof named === "string") operands = [named];
  }
  const wanted = verb.operand ? 1 : 0;
  if (operands.length < wanted) {
    const either = byFlag ? ` (give it as ${verb.operand} or --${byFlag})` : "";
    throw new UsageError(`missing ${verb.operand}${either}`);
  }
  if (operands.length > wanted) {
    throw new UsageError(`unexpected argument ${JSON.stringify(operands[wanted])}`);
  }
  return { flags: new FlagReader(values), json: values.json === true, operand: operands[0] ?? "" };
}

/** `--help` anywhere, or `help` first: the help of the command named, as text, or a JSON string under `--json`. */
export function helpOutcome(args: string[]): CommandOutcome | undefined {
  const asked = args[0] === HELP_WORD
    ? args.slice(1)
    : args.some((arg) => HELP_FLAGS.has(arg))
    ? args
    : undefined;
  if (!asked) return undefined;
  const words = asked.filter((arg) => !HELP_FLAGS.has(arg) && arg !== "--json");
  const text = helpText(words, { nouns: NOUNS, nounHelp: NOUN_HELP, singles: SINGLE_COMMANDS });
  return { exitCode: 0, stdout: args.includes("--json") ? JSON.stringify(text) : text, result: text };
}

/** Runs one admin command line against `env.kv`, as `env.actor`. */
export async function runCommandLine(args: string[], env: CommandEnv): Promise<CommandOutcome> {
  const helped = helpOutcome(args);
  if (helped) return helped;
  const [nounWord, verbWord, ...rest] = args;
  let where = "admin";
  try {
    const command = choose<Noun | Verb>({ ...NOUNS, ...SINGLE_COMMANDS }, nounWord, "command");
    where += `: ${nounWord}`;
    const single = Object.hasOwn(SINGLE_COMMANDS, nounWord);
    const verb = single ? command as Verb : choose(command as Noun, verbWord, "verb");
    if (!single) where += ` ${verbWord}`;
    const { flags, json, operand } = parse(verb, single ? args.slice(1) : rest);
    const ctx = commandContext(env.kv, env.now);
    const action = single ? nounWord : `${nounWord}.${verbWord}`;
    const result = await execute(ctx, { action, verb, flags, operand, actor: env.actor });
    return {
      exitCode: 0,
      stdout: json ? JSON.stringify(result.json, null, 2) : result.human,
      result: result.json,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const line = message.split("\n", 1)[0];
    if (error instanceof UsageError) {
      return { exitCode: 2, stderr: `${where}: ${line}`, reason: line, problem: "usage" };
    }
    if (error instanceof RecordError) {
      return { exitCode: 1, stderr: `${where}: ${line}`, reason: line, problem: "refused" };
    }
    return { exitCode: 1, stderr: `${where}: failed: ${line}`, reason: `failed: ${line}`, problem: "failed" };
  }
}
