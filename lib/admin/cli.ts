/**
 * @module The admin CLI: `deno task admin <noun> <verb> [flags]`, or `deno task admin <command> [flags]` for
 * the few commands that are a noun alone (`usage`). Parses, dispatches to the noun modules and prints, so the
 * contract's output rules (one JSON value under `--json`, one line on stderr, exit 2 for a wrong command
 * line, 1 for a refused change) hold for every verb alike.
 */
import { parseArgs } from "node:util";
import { openStore } from "../store/kv.ts";
import { RecordError } from "../store/record_error.ts";
import type { Noun, Verb } from "./command.ts";
import { FlagReader, UsageError } from "./flags.ts";
import { parseArgsProblem } from "./parse_problem.ts";
import { USAGE_COMMAND } from "./usage_commands.ts";
import { AUDIT_COMMAND } from "./audit_command.ts";
import { commandContext, execute, NOUNS } from "./execute.ts";

/** Commands that take no verb: the word after the command is already a flag. */
const SINGLE_COMMANDS: Record<string, Verb> = {
  usage: USAGE_COMMAND,
  audit: AUDIT_COMMAND,
};

export interface AdminIo {
  kv: Deno.Kv;
  out: (text: string) => void;
  err: (text: string) => void;
  now?: () => Date;
}

function choose<T>(table: Record<string, T>, word: string | undefined, what: string): T {
  const expected = `expected one of ${Object.keys(table).join(", ")}`;
  if (word === undefined) throw new UsageError(`missing ${what} (${expected})`);
  if (!Object.hasOwn(table, word)) {
    throw new UsageError(`unknown ${what} ${JSON.stringify(word)} (${expected})`);
  }
  return table[word];
}

function parse(verb: Verb, args: string[]): { flags: FlagReader; json: boolean; operand: string } {
  const options = { ...verb.flags, json: { type: "boolean" as const } };
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw parseArgsProblem(error, Object.keys(options)) ?? error;
  }
  const { values, positionals } = parsed;
  const operands = verb.operand ? 1 : 0;
  if (positionals.length < operands) throw new UsageError(`missing ${verb.operand}`);
  if (positionals.length > operands) {
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[operands])}`);
  }
  return { flags: new FlagReader(values), json: values.json === true, operand: positionals[0] ?? "" };
}

/** Runs one admin command against `io.kv`; returns the process exit status. */
export async function runAdmin(args: string[], io: AdminIo): Promise<number> {
  const [nounWord, verbWord, ...rest] = args;
  let where = "admin";
  try {
    const command = choose<Noun | Verb>({ ...NOUNS, ...SINGLE_COMMANDS }, nounWord, "command");
    where += `: ${nounWord}`;
    const single = Object.hasOwn(SINGLE_COMMANDS, nounWord);
    const verb = single ? command as Verb : choose(command as Noun, verbWord, "verb");
    if (!single) where += ` ${verbWord}`;
    const { flags, json, operand } = parse(verb, single ? args.slice(1) : rest);
    const ctx = commandContext(io.kv, io.now ?? (() => new Date()));
    const action = single ? nounWord : `${nounWord}.${verbWord}`;
    const result = await execute(ctx, { action, verb, flags, operand, actor: { kind: "cli" } });
    io.out(json ? JSON.stringify(result.json, null, 2) : result.human);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const line = message.split("\n", 1)[0];
    if (error instanceof UsageError) {
      io.err(`${where}: ${line}`);
      return 2;
    }
    io.err(error instanceof RecordError ? `${where}: ${line}` : `${where}: failed: ${line}`);
    return 1;
  }
}

if (import.meta.main) {
  const target = Deno.env.get("GATEWAY_KV");
  let kv: Deno.Kv;
  try {
    kv = await openStore(target);
  } catch (error) {
    console.error(`admin: cannot open the store ${target ?? "(default)"}: ${(error as Error).message}`);
    Deno.exit(1);
  }
  const code = await runAdmin(Deno.args, {
    kv,
    out: (text) => console.log(text),
    err: (text) => console.error(text),
  });
  kv.close();
  Deno.exit(code);
}
