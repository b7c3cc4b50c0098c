/**
 * @module One user's own page (`/admin/users?user=NAME`): use against the user's quotas, the quotas, and, set
 * apart below, removing the user. Edits answer with this page again; removing answers with the list.
 */
import type { UserRecord } from "../store/records.ts";
import { ActionForm, Field } from "./form_fields.tsx";
import { QuotaBars } from "./quota_bars.tsx";
import { quotaUse } from "./quota_use.ts";
import type { SectionContext } from "./section_pages.tsx";

/** A user's limits as form fields: blank for a new user, or the user's values in its edit form. */
export function QuotaFields(props: { record?: UserRecord }) {
  const u = props.record;
  const edit = u !== undefined;
  return (
    <>
      <Field label="Daily tokens" name="daily-tokens" value={u?.dailyTokens} edit={edit} />
      <Field label="Weekly tokens" name="weekly-tokens" value={u?.weeklyTokens} edit={edit} />
      <Field label="Monthly tokens" name="monthly-tokens" value={u?.monthlyTokens} edit={edit} />
      <Field label="Max concurrent" name="max-concurrent" value={u?.maxConcurrent} edit={edit} />
    </>
  );
}

export const userPath = (name: string) => `/admin/users?user=${encodeURIComponent(name)}`;

export async function userPage(ctx: SectionContext, u: UserRecord) {
  const bars = await quotaUse(ctx.kv, "user", u.name, u, ctx.now);
  const here = userPath(u.name);
  return (
    <>
      <p class="crumbs">
        <a href="/admin/users">← All users</a>
      </p>
      <section class="panel" aria-labelledby="user-title" data-user-page={u.name}>
        <header class="panel-head">
          <h2 id="user-title">{u.name}</h2>
          <a href={`/admin?scope=user:${encodeURIComponent(u.name)}`} class="push">Usage over time</a>
        </header>
        <h3>Tokens used of quota (UTC periods, all the user's keys)</h3>
        <QuotaBars bars={bars} />
      </section>
      <section class="panel" aria-labelledby="settings-title">
        <h2 id="settings-title">Quotas</h2>
        <ActionForm command="user.update" csrf={ctx.csrf} target={u.name} action={here}>
          <div class="fields">
            <QuotaFields record={u} />
          </div>
          <button type="submit">Save changes</button>
        </ActionForm>
      </section>
      <section class="panel danger-zone" aria-labelledby="remove-title">
        <h2 id="remove-title">Remove the user</h2>
        <p>Only a user who owns no active key can be removed; revoke or move the user's keys first.</p>
        <ActionForm command="user.remove" csrf={ctx.csrf} target={u.name} class="action inline">
          <button type="submit" class="danger">Remove this user</button>
        </ActionForm>
      </section>
    </>
  );
}
