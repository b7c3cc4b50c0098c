/**
 * @module The admin CLI: `deno task admin <noun> <verb> [flags]`, or `deno task admin <command> [flags]` for
 * the few commands that are a noun alone (`usage`), on the store; with `--gateway URL [--token TOKEN]` before
 * the command, on a running gateway through its admin API. Either way the command line is run by
 * `runCommandLine` (here, or there), so the contract's output rules (one JSON value under `--json`, one line
 * on stderr, exit 2 for a wrong command line, 1 for a refused change) hold for every verb and both ways alike.
 */
import { openStore } from "../store/kv.ts";
import { type CommandOutcome, helpOutcome, runCommandLine } from "./command_line.ts";
import { UsageError } from "./flags.ts";
import { cliRequest } from "./gateway_target.ts";
import { runRemote } from "./http_client.ts";

export interface AdminIo {
  kv: Deno.Kv;
  out: (text: string) => void;
  err: (text: string) => void;
  now?: () => Date;
}

/** Prints an outcome as the CLI does; returns the exit status. */
export function printOutcome(outcome: CommandOutcome, io: Pick<AdminIo, "out" | "err">): number {
  if (outcome.exitCode === 0) io.out(outcome.stdout);
  else io.err(outcome.stderr);
  return outcome.exitCode;
}

/** Runs one admin command against `io.kv`; returns the process exit status. */
export async function runAdmin(args: string[], io: AdminIo): Promise<number> {
  const outcome = await runCommandLine(args, {
    kv: io.kv,
    now: io.now ?? (() => new Date()),
    actor: { kind: "cli" },
  });
  return printOutcome(outcome, io);
}

async function main(args: string[]): Promise<number> {
  const out = (text: string) => console.log(text);
  const err = (text: string) => console.error(text);
  let request;
  try {
    request = cliRequest(args, Deno.env.get("GATEWAY_ADMIN_TOKEN"));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err(`admin: ${error.message}`);
    return 2;
  }
  if (request.target) return await runRemote(request.args, request.target, { out, err });
  // The help needs no store; opening one would create the default store file where there was none.
  const helped = helpOutcome(request.args);
  if (helped) return printOutcome(helped, { out, err });
  const target = Deno.env.get("GATEWAY_KV");
  let kv: Deno.Kv;
  try {
    // As the gateway: a GATEWAY_KV whose folder is not there is a typo, not a new store.
    kv = await openStore(target, { folderMustExist: target !== undefined });
  } catch (error) {
    err(`admin: cannot open the store ${target ?? "(default)"}: ${(error as Error).message}`);
    return 1;
  }
  try {
    return await runAdmin(request.args, { kv, out, err });
  } finally {
    kv.close();
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
