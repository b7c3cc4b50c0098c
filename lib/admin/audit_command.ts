/**
 * @module `admin audit`: the changes made through the CLI, the admin page and the admin API, newest first. A
 * command without verbs, since it only reads.
 */
import { type Actor, changesText, listAudit } from "../audit/mod.ts";
import type { Verb } from "./command.ts";
import { sinceInstant } from "./time_flags.ts";
import { table } from "./output.ts";

/** `cli`; `page`, its session's tag and address; `api` and the caller's address. */
export function actorText(actor: Actor): string {
  return [actor.kind, actor.session, actor.address].filter((part) => part !== undefined).join(" ");
}

export const AUDIT_COMMAND: Verb = {
  flags: {
    since: {
      type: "string",
      value: "WHEN",
      help: "only changes from then on: ISO-8601 (2026-11-01) or a time ago (24h, 7d)",
    },
    limit: { type: "string", value: "N", help: "at most the newest N changes (default 100)" },
  },
  help: "the changes made through the CLI, the admin page and the admin API, newest first",
  async run(ctx, flags) {
    const since = flags.string("since");
    const records = await listAudit(ctx.kv, {
      since: since === undefined ? undefined : sinceInstant("since", since, ctx.now()),
      limit: flags.count("limit") ?? 100,
    });
    const rows = records.map((r) => [r.time, actorText(r.actor), r.action, r.target, changesText(r.changes)]);
    return {
      json: records,
      human: table(["TIME", "ACTOR", "ACTION", "TARGET", "CHANGES"], rows, "No changes recorded."),
    };
  },
};
