/**
 * @module Rewording `node:util` parseArgs failures. Its messages are multi-line and name options the Node way;
 * the admin CLI owes the user one line saying which flag was wrong and what would have been right.
 */
import { UsageError } from "./flags.ts";

/** The usage error for a parseArgs failure, or undefined when `error` did not come from parseArgs. */
export function parseArgsProblem(error: unknown, accepted: string[]): UsageError | undefined {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS")) return undefined;
  const message = (error as Error).message;
  const flag = /'(-{1,2}[^' ]+)/.exec(message)?.[1] ?? "a flag";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    return new UsageError(
      `unknown flag ${flag} (accepted: ${accepted.map((name) => `--${name}`).join(", ")})`,
    );
  }
  if (message.includes("argument missing")) return new UsageError(`${flag} needs a value`);
  if (message.includes("ambiguous")) {
    return new UsageError(`${flag} needs a value (write ${flag}=VALUE for a value starting with "-")`);
  }
  if (message.includes("does not take an argument")) return new UsageError(`${flag} takes no value`);
  return new UsageError(message.split("\n", 1)[0]);
}
