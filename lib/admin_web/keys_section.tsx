/**
 * @module The keys section: every key with its status and its use against its quotas, a form to create one,
 * and a link to each key's own page, where it is edited, rotated and revoked (`key_page.tsx`).
 */
import { keyStatus } from "../admin/key_commands.ts";
import { Catalog } from "../store/catalog.ts";
import { getKey, listKeys } from "../store/keys.ts";
import { RecordError } from "../store/record_error.ts";
import type { KeyRecord } from "../store/records.ts";
import { ActionForm } from "./form_fields.tsx";
import { PolicyFields } from "./key_fields.tsx";
import { keyPage, keyPath } from "./key_page.tsx";
import { utc } from "./shared/format.ts";
import { type QuotaBar, quotaUses } from "./quota_use.ts";
import { QuotaBars } from "./quota_bars.tsx";
import type { SectionContext } from "./section_pages.tsx";

function KeyRow(props: { k: KeyRecord; bars: QuotaBar[]; now: Date }) {
  const { k } = props;
  const status = keyStatus(k, props.now);
  return (
    <tr data-key={k.id} data-status={status}>
      <td>
        <a href={keyPath(k.id)} class="key-name">{k.name ?? k.hint}</a>
        <div class="muted">
          <code>{k.id}</code> {k.name ? k.hint : ""}
        </div>
      </td>
      <td>
        <span class={`badge ${status}`}>{status}</span>
        {k.previous && Date.parse(k.previous.validUntil) > props.now.getTime()
          ? <div class="muted">previous {k.previous.hint} until {utc(k.previous.validUntil)}</div>
          : null}
      </td>
      <td>{k.model}</td>
      <td>{k.user ?? "–"}</td>
      <td>{k.revokedAt ? "–" : <QuotaBars bars={props.bars} />}</td>
      <td>{k.expiresAt ? utc(k.expiresAt) : "–"}</td>
      <td>
        <a href={keyPath(k.id)} data-manage={k.id}>{k.revokedAt ? "Details" : "Manage"}</a>{" "}
        <a href={`/admin?scope=key:${k.id}`}>Usage</a>
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
  const asked = ctx.query.get("key");
  if (asked !== null) {
    const key = await getKey(ctx.kv, asked).catch((error) => {
      if (error instanceof RecordError) return undefined;
      throw error;
    });
    if (key) return keyPage(ctx, key);
  }
  const missing = asked === null
    ? null
    : <p class="notice error" role="alert" data-notice="error">No key with id {asked}.</p>;
  const catalog = new Catalog(ctx.kv);
  const clusters = (await catalog.clusters.list()).map((c) => c.name);
  const users = (await catalog.users.list()).map((u) => u.name);
  const keys = (await listKeys(ctx.kv)).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const live = keys.filter((k) => !k.revokedAt).map((k) => ({ id: k.id, quotas: k }));
  const bars = await quotaUses(ctx.kv, "key", live, ctx.now);
  return (
    <>
      {missing}
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
                <th>Tokens used of quota</th>
                <th>Expires (UTC)</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {keys.length === 0
                ? (
                  <tr>
                    <td colSpan={7} class="empty">No keys yet.</td>
                  </tr>
                )
                : keys.map((k) => <KeyRow key={k.id} k={k} bars={bars.get(k.id) ?? []} now={ctx.now} />)}
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
