/**
 * @module The shape every admin verb has, so `cli.ts` can parse, dispatch and print for all nouns in one
 * place and the noun modules only decide what a verb does to the store.
 */
import type { Catalog } from "../store/catalog.ts";
import type { FlagReader } from "./flags.ts";

export type FlagSpec = { type: "string" | "boolean"; multiple?: boolean };

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
  /** Placeholder for the one positional operand (`NAME`, `ID`), when the verb takes one. */
  operand?: string;
  run(ctx: CommandContext, flags: FlagReader, operand: string): Promise<CommandResult>;
}

export type Noun = Record<string, Verb>;
