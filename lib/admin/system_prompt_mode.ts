/**
 * @module `--system-prompt-mode prepend|replace` on `key create` / `key update`: whether the key's system
 * prompt goes before the client's own system messages (prepend, the default) or replaces them.
 */
import { SYSTEM_PROMPT_MODES, type SystemPromptMode } from "../store/records.ts";
import { type FlagReader, UsageError } from "./flags.ts";

export const SYSTEM_PROMPT_MODE_FLAG = {
  "system-prompt-mode": {
    type: "string",
    value: "prepend|replace",
    help: "replace: the key's system prompt is the only one, the client's system messages are removed; " +
      "prepend (the default): they follow it",
  },
} as const;

/** Prepend is what a key without a mode gets, so setting it clears the field. */
export function systemPromptMode(flags: FlagReader): SystemPromptMode | null | undefined {
  const raw = flags.string("system-prompt-mode");
  if (raw === undefined) return undefined;
  const found = SYSTEM_PROMPT_MODES.find((mode) => mode === raw);
  if (!found) {
    throw new UsageError(`--system-prompt-mode must be prepend or replace, got ${JSON.stringify(raw)}`);
  }
  return found === "prepend" ? null : found;
}
