/**
 * @module The one way an admin command runs, whoever asked: the CLI parses a command line into flags, the
 * admin page parses a form into the same flags, and both come here, so a change is validated by the same
 * code, refused with the same message and recorded in the audit trail the same way.
 */
import { type Actor, recordAudit } from "../audit/mod.ts";
import { Catalog } from "../store/catalog.ts";
import type { CommandContext, CommandResult, Noun, Verb } from "./command.ts";
import type { FlagReader } from "./flags.ts";
import { SERVER_VERBS } from "./server_commands.ts";
import { CLUSTER_VERBS } from "./cluster_commands.ts";
import { USER_VERBS } from "./user_commands.ts";
import { KEY_VERBS } from "./key_commands.ts";

export const NOUNS: Record<string, Noun> = {
  server: SERVER_VERBS,
  cluster: CLUSTER_VERBS,
  user: USER_VERBS,
  key: KEY_VERBS,
};

export function commandContext(kv: Deno.Kv, now: () => Date): CommandContext {
  return { kv, catalog: new Catalog(kv), now };
}

/** Runs `verb` and, when it changed something, records the change as `action` by `actor`. */
export async function execute(
  ctx: CommandContext,
  call: { action: string; verb: Verb; flags: FlagReader; operand: string; actor: Actor },
): Promise<CommandResult> {
  const result = await call.verb.run(ctx, call.flags, call.operand);
  if (result.audit) {
    await recordAudit(ctx.kv, {
      time: ctx.now(),
      actor: call.actor,
      action: call.action,
      change: result.audit,
    });
  }
  return result;
}
