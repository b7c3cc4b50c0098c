/**
 * @module The audit trail as an admin reads it: each change on a line of its own as `field: old → new`, with
 * the fields' names in words, lists and switches written out instead of JSON, times in UTC, and a key named
 * by its name and hint instead of its id alone. Nothing is shortened: a long value wraps.
 */
import type { Actor, FieldChange } from "../audit/mod.ts";
import { utc } from "./shared/format.ts";

const FIELD_NAMES: Record<string, string> = {
  allowIps: "allowed IPs",
  allowDomains: "allowed domains",
  forceJson: "force JSON",
  systemPrompt: "system prompt",
  maxCtx: "max context",
  maxPredict: "max predict",
  defaultCtx: "default context",
  defaultPredict: "default predict",
  maxConcurrent: "max concurrent",
  dailyTokens: "daily tokens",
  weeklyTokens: "weekly tokens",
  monthlyTokens: "monthly tokens",
  expiresAt: "expires",
  revokedAt: "revoked",
  rotatedAt: "rotated",
  previousHint: "previous secret",
  previousValidUntil: "previous secret works until",
  hint: "secret",
  apiKey: "API key",
  rpm: "requests per minute",
  url: "URL",
  id: "id",
};

/** `dailyTokens` → `daily tokens`, for fields without a name of their own. */
export function fieldName(field: string): string {
  return FIELD_NAMES[field] ?? field.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A value as words: `on`/`off`, lists comma-separated (`none` when empty), models as `tag=alias`. */
export function valueText(value: unknown): string {
  if (value === undefined || value === null) return "–";
  if (typeof value === "boolean") return value ? "on" : "off";
  if (typeof value === "string") return ISO_TIME.test(value) ? `${utc(value)} UTC` : value;
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.map(valueText).join(", ");
  if (typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (typeof o.tag === "string") return typeof o.alias === "string" ? `${o.tag}=${o.alias}` : o.tag;
    return Object.entries(o).map(([k, v]) => `${fieldName(k)} ${valueText(v)}`).join(", ");
  }
  return String(value);
}

export function ChangeList({ changes }: { changes: Record<string, FieldChange> }) {
  const entries = Object.entries(changes);
  if (entries.length === 0) return <span class="muted">–</span>;
  return (
    <ul class="changes">
      {entries.map(([field, c]) => (
        <li key={field} data-field={field}>
          <span class="field-name">{fieldName(field)}</span>:{" "}
          {"before" in c ? <span class="before">{valueText(c.before)}</span> : <span class="muted">–</span>}
          {" → "}
          {"after" in c ? <span class="after">{valueText(c.after)}</span> : <span class="muted">–</span>}
        </li>
      ))}
    </ul>
  );
}

/** Who made a change, in words: the CLI, a page session and its address, the admin API and its caller. */
export function actorLabel(actor: Actor): string {
  const from = actor.address ? ` from ${actor.address}` : "";
  if (actor.kind === "cli") return "Command line";
  if (actor.kind === "page") return `Admin page${actor.session ? `, session ${actor.session}` : ""}${from}`;
  if (actor.kind === "api") return `Admin API${from}`;
  return [actor.kind, actor.session, actor.address].filter((part) => part !== undefined).join(" ");
}
