/**
 * @module The shape every admin verb has, so `cli.ts` can parse, dispatch and print for all nouns in one
 * place and the noun modules only decide what a verb does to the store.
 */
import type { Catalog } from "../store/catalog.ts";
import type { FlagReader } from "./flags.ts";

/**
 * One flag: how the parser reads it and what `--help` says of it. The help lives beside the type so a flag
 * cannot be accepted without being explained.
 */
export interface FlagSpec {
  type: "string" | "boolean";
  /** The flag may be given more than once, each value adding to a list; any other flag given twice is refused. */
  multiple?: boolean;
  /** What the value looks like in the help (`N`, `URL`, `TAG[=ALIAS]`); `VALUE` when absent. */
  value?: string;
  /** What the flag does, in a phrase. */
  help: string;
}

export interface CommandContext {
  kv: Deno.Kv;
  catalog: Catalog;
  now: () => Date;
}

/** What a verb produced: printed as `json` under `--json`, as `human` otherwise. */
export interface CommandResult {
  json: unknown;
  human: string;
}

export interface Verb {
  /** The flags the verb accepts besides `--json`; anything else is a usage error. */
  flags: Record<string, FlagSpec>;
  /**
   * Placeholder for the one positional operand (`NAME`, `ID`), when the verb takes one. It may be given as a
   * flag too (`--name NAME`, `--id ID`), unless the verb has a flag of that name for something else.
   */
  operand?: string;
  /** What the verb does, in a phrase, for `--help`. */
  help: string;
  run(ctx: CommandContext, flags: FlagReader, operand: string): Promise<CommandResult>;
}

export type Noun = Record<string, Verb>;
