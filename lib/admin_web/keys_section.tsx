/** @module The keys section: every key with its status, and forms to create, edit, rotate and revoke. */
import { keyStatus } from "../admin/key_commands.ts";
import { Catalog } from "../store/catalog.ts";
import { listKeys } from "../store/keys.ts";
import type { KeyRecord } from "../store/records.ts";
import { ActionForm, Check, Field, ListField, Select, TextArea } from "./form_fields.tsx";
import { utc } from "./format.ts";
import type { SectionContext } from "./section_pages.tsx";

const CAPABILITIES: [string, string, keyof KeyRecord][] = [
  ["tools", "Tools", "tools"],
  ["vision", "Vision", "vision"],
  ["thinking", "Thinking", "thinking"],
  ["force-json", "Force JSON", "forceJson"],
];

/** The policy fields, blank for a new key, or showing `key` (and reporting changes) in its edit form. */
function PolicyFields(props: { record?: KeyRecord; clusters: string[]; users: string[] }) {
  const k = props.record;
  const edit = k !== undefined;
  return (
    <>
      <div class="fields">
        <Field label="Model" name="model" value={k?.model} edit={edit} placeholder="llama3.1:8b" />
        <Field label="Name" name="name" value={k?.name} edit={edit} />
        <Select
          label="Cluster"
          name="cluster"
          value={k?.cluster}
          edit={edit}
          options={props.clusters}
          blank="any"
        />
        <Select label="User" name="user" value={k?.user} edit={edit} options={props.users} blank="none" />
        <Field
          label="Expires (ISO 8601)"
          name="expires"
          value={k?.expiresAt}
          edit={edit}
          placeholder="2026-12-31"
        />
        <Field label="Requests per minute" name="rpm" value={k?.rpm} edit={edit} />
        <Field label="Daily tokens" name="daily-tokens" value={k?.dailyTokens} edit={edit} />
        <Field label="Weekly tokens" name="weekly-tokens" value={k?.weeklyTokens} edit={edit} />
        <Field label="Monthly tokens" name="monthly-tokens" value={k?.monthlyTokens} edit={edit} />
        <Field label="Max concurrent" name="max-concurrent" value={k?.maxConcurrent} edit={edit} />
        <Field label="Max context" name="max-ctx" value={k?.maxCtx} edit={edit} />
        <Field label="Max predict" name="max-predict" value={k?.maxPredict} edit={edit} />
        <Field label="Default context" name="default-ctx" value={k?.defaultCtx} edit={edit} />
        <Field label="Default predict" name="default-predict" value={k?.defaultPredict} edit={edit} />
      </div>
      <div class="fields">
        <ListField label="Allowed IPs / CIDRs" name="allow-ip" values={k?.allowIps} edit={edit} />
        <ListField label="Allowed domains" name="allow-domain" values={k?.allowDomains} edit={edit} />
        <TextArea label="System prompt" name="system-prompt" value={k?.systemPrompt} edit={edit} />
      </div>
      <div class="checks">
        {CAPABILITIES.map(([flag, label, field]) => (
          <Check key={flag} label={label} name={flag} checked={k?.[field] === true} edit={edit} />
        ))}
      </div>
    </>
  );
}

function KeyRow(props: { k: KeyRecord; now: Date; csrf: string; clusters: string[]; users: string[] }) {
  const { k, csrf } = props;
  const status = keyStatus(k, props.now);
  return (
    <tr data-key={k.id} data-status={status}>
      <td>
        <code>{k.id}</code> <a href={`/admin?scope=key:${k.id}`}>usage</a>
        <div class="muted">{k.name ?? ""} {k.hint}</div>
      </td>
      <td>
        <span class={`badge ${status}`}>{status}</span>
        {k.previous && Date.parse(k.previous.validUntil) > props.now.getTime()
          ? <div class="muted">previous {k.previous.hint} until {utc(k.previous.validUntil)}</div>
          : null}
      </td>
      <td>{k.model}</td>
      <td>{k.user ?? "–"}</td>
      <td>{k.expiresAt ? utc(k.expiresAt) : "–"}</td>
      <td>
        {k.revokedAt ? null : (
          <details>
            <summary>Manage</summary>
            <ActionForm command="key.update" csrf={csrf} target={k.id}>
              <PolicyFields record={k} clusters={props.clusters} users={props.users} />
              <button type="submit">Save changes</button>
            </ActionForm>
            <ActionForm command="key.rotate" csrf={csrf} target={k.id} class="action inline">
              <Field label="Old secret works for" name="grace" value="24h" />
              <button type="submit">Rotate secret</button>
            </ActionForm>
            <ActionForm command="key.revoke" csrf={csrf} target={k.id} class="action inline">
              <button type="submit" class="danger">Revoke</button>
            </ActionForm>
          </details>
        )}
      </td>
    </tr>
  );
}

/** "2 active, 1 expired, 1 revoked of 4": a key past its expiry is refused, so it is not counted active. */
export function countsText(keys: KeyRecord[], now: Date): string {
  const by = new Map<string, number>();
  for (const k of keys) {
    const status = keyStatus(k, now);
    by.set(status, (by.get(status) ?? 0) + 1);
  }
  const parts = (["active", "expired", "revoked"] as const)
    .filter((status) => status === "active" || by.has(status))
    .map((status) => `${by.get(status) ?? 0} ${status}`);
  return `${parts.join(", ")} of ${keys.length}`;
}

export async function keysSection(ctx: SectionContext) {
  const catalog = new Catalog(ctx.kv);
  const clusters = (await catalog.clusters.list()).map((c) => c.name);
  const users = (await catalog.users.list()).map((u) => u.name);
  const keys = (await listKeys(ctx.kv)).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (
    <>
      <section class="panel" aria-labelledby="keys-title">
        <header class="panel-head">
          <h2 id="keys-title">Keys</h2>
          <span class="summary" data-key-counts>{countsText(keys, ctx.now)}</span>
        </header>
        <div class="table-wrap">
          <table data-table="keys">
            <thead>
              <tr>
                <th>Key</th>
                <th>Status</th>
                <th>Model</th>
                <th>User</th>
                <th>Expires (UTC)</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {keys.length === 0
                ? (
                  <tr>
                    <td colSpan={6} class="empty">No keys yet.</td>
                  </tr>
                )
                : keys.map((k) => (
                  <KeyRow key={k.id} k={k} now={ctx.now} csrf={ctx.csrf} clusters={clusters} users={users} />
                ))}
            </tbody>
          </table>
        </div>
      </section>
      <section class="panel" aria-labelledby="new-key-title">
        <h2 id="new-key-title">Create a key</h2>
        <ActionForm command="key.create" csrf={ctx.csrf}>
          <PolicyFields clusters={clusters} users={users} />
          <button type="submit">Create key</button>
        </ActionForm>
      </section>
    </>
  );
}
