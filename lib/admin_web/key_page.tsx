/**
 * @module One key's own page (`/admin/keys?key=ID`), where it is managed: its settings, its use against its
 * quotas, rotating its secret, and, set apart below with what it does spelled out, revoking it. Its forms
 * answer with this page again, so the admin sees the result where the change was made.
 */
import { keyStatus } from "../admin/key_commands.ts";
import { Catalog } from "../store/catalog.ts";
import type { KeyRecord } from "../store/records.ts";
import { ActionForm, Field } from "./form_fields.tsx";
import { utc } from "./shared/format.ts";
import { PolicyFields } from "./key_fields.tsx";
import { QuotaBars } from "./quota_bars.tsx";
import { quotaUse } from "./quota_use.ts";
import type { SectionContext } from "./section_pages.tsx";

export const keyPath = (id: string) => `/admin/keys?key=${encodeURIComponent(id)}`;

export async function keyPage(ctx: SectionContext, k: KeyRecord) {
  const catalog = new Catalog(ctx.kv);
  const clusters = (await catalog.clusters.list()).map((c) => c.name);
  const users = (await catalog.users.list()).map((u) => u.name);
  const bars = k.revokedAt ? [] : await quotaUse(ctx.kv, "key", k.id, k, ctx.now);
  const status = keyStatus(k, ctx.now);
  const here = keyPath(k.id);
  const previous = k.previous && Date.parse(k.previous.validUntil) > ctx.now.getTime()
    ? k.previous
    : undefined;
  return (
    <>
      <p class="crumbs">
        <a href="/admin/keys">← All keys</a>
      </p>
      <section class="panel" aria-labelledby="key-title" data-key-page={k.id} data-status={status}>
        <header class="panel-head">
          <h2 id="key-title">{k.name ?? "Unnamed key"}</h2>
          <span class={`badge ${status}`}>{status}</span>
          <span class="summary">
            <code>{k.id}</code> · secret {k.hint} · model {k.model}
            {k.user ? ` · user ${k.user}` : ""}
          </span>
          <a href={`/admin?scope=key:${k.id}`} class="push">Usage over time</a>
        </header>
        {k.revokedAt ? <p>Revoked {utc(k.revokedAt)} UTC: every request with it is refused.</p> : null}
        {status === "expired"
          ? <p>Expired {utc(k.expiresAt!)} UTC: every request with it is refused.</p>
          : null}
        {k.revokedAt ? null : (
          <>
            <h3>Tokens used of quota (UTC periods)</h3>
            <QuotaBars bars={bars} />
          </>
        )}
      </section>
      {k.revokedAt ? null : (
        <>
          <section class="panel" aria-labelledby="settings-title">
            <h2 id="settings-title">Settings</h2>
            <ActionForm command="key.update" csrf={ctx.csrf} target={k.id} action={here}>
              <PolicyFields record={k} clusters={clusters} users={users} />
              <button type="submit">Save changes</button>
            </ActionForm>
          </section>
          <section class="panel" aria-labelledby="rotate-title">
            <h2 id="rotate-title">Rotate the secret</h2>
            <p class="muted">
              Makes a new secret, shown once. The current one keeps working for the time given, so clients can
              switch without an outage.
              {previous
                ? ` The one before (${previous.hint}) works until ${utc(previous.validUntil)} UTC.`
                : ""}
            </p>
            <ActionForm
              command="key.rotate"
              csrf={ctx.csrf}
              target={k.id}
              action={here}
              class="action inline"
            >
              <Field label="Old secret works for" name="grace" value="24h" />
              <button type="submit">Rotate secret</button>
            </ActionForm>
          </section>
          <section class="panel danger-zone" aria-labelledby="revoke-title">
            <h2 id="revoke-title">Revoke the key</h2>
            <p>
              Every secret of this key stops working at once, including one still in its rotation grace
              period. This cannot be undone: clients need a new key.
            </p>
            <ActionForm
              command="key.revoke"
              csrf={ctx.csrf}
              target={k.id}
              action={here}
              class="action inline"
            >
              <button type="submit" class="danger">Revoke this key</button>
            </ActionForm>
          </section>
        </>
      )}
    </>
  );
}
