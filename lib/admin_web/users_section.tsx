/**
 * @module The users section: key owners with their use against their token quotas and their concurrency
 * limit, and forms to add, edit and remove them.
 */
import { Catalog } from "../store/catalog.ts";
import type { UserRecord } from "../store/records.ts";
import { ActionForm, Field } from "./form_fields.tsx";
import { count } from "./format.ts";
import { type QuotaBar, quotaUses } from "./quota_use.ts";
import { QuotaBars } from "./quota_bars.tsx";
import type { SectionContext } from "./section_pages.tsx";

function QuotaFields(props: { record?: UserRecord }) {
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

const quota = (n?: number) => n === undefined ? "–" : count(n);

function UserRow(props: { u: UserRecord; bars: QuotaBar[]; csrf: string }) {
  const { u, csrf } = props;
  return (
    <tr data-user-row={u.name}>
      <td>
        {u.name} <a href={`/admin?scope=user:${encodeURIComponent(u.name)}`}>usage</a>
      </td>
      <td>
        <QuotaBars bars={props.bars} />
      </td>
      <td class="num">{quota(u.maxConcurrent)}</td>
      <td>
        <details>
          <summary>Edit</summary>
          <ActionForm command="user.update" csrf={csrf} target={u.name}>
            <div class="fields">
              <QuotaFields record={u} />
            </div>
            <button type="submit">Save changes</button>
          </ActionForm>
          <ActionForm command="user.remove" csrf={csrf} target={u.name} class="action inline">
            <button type="submit" class="danger">Remove</button>
          </ActionForm>
        </details>
      </td>
    </tr>
  );
}

export async function usersSection(ctx: SectionContext) {
  const users = await new Catalog(ctx.kv).users.list();
  const bars = await quotaUses(ctx.kv, "user", users.map((u) => ({ id: u.name, quotas: u })), ctx.now);
  return (
    <section class="panel" aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <div class="table-wrap">
        <table data-table="users">
          <thead>
            <tr>
              <th>Name</th>
              <th>Tokens used of quota (UTC periods)</th>
              <th class="num">Max concurrent</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {users.length === 0
              ? (
                <tr>
                  <td colSpan={4} class="empty">No users yet.</td>
                </tr>
              )
              : users.map((u) => <UserRow key={u.name} u={u} bars={bars.get(u.name)!} csrf={ctx.csrf} />)}
          </tbody>
        </table>
      </div>
      <h3>Add a user</h3>
      <ActionForm command="user.add" csrf={ctx.csrf}>
        <div class="fields">
          <Field label="Name" name="name" />
          <QuotaFields />
        </div>
        <button type="submit">Add user</button>
      </ActionForm>
    </section>
  );
}
