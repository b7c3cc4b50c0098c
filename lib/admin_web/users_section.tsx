/**
 * @module The users section: key owners with their use against their token quotas and their concurrency
 * limit, and a form to add one; each is edited and removed on its own page (`user_page.tsx`).
 */
import { Catalog } from "../store/catalog.ts";
import { RecordError } from "../store/record_error.ts";
import type { UserRecord } from "../store/records.ts";
import { ActionForm, Field } from "./form_fields.tsx";
import { count } from "./shared/format.ts";
import { type QuotaBar, quotaUses } from "./quota_use.ts";
import { QuotaBars } from "./quota_bars.tsx";
import type { SectionContext } from "./section_pages.tsx";
import { QuotaFields, userPage, userPath } from "./user_page.tsx";

const quota = (n?: number) => n === undefined ? "–" : count(n);

function UserRow(props: { u: UserRecord; bars: QuotaBar[] }) {
  const { u } = props;
  return (
    <tr data-user-row={u.name}>
      <td>
        <a href={userPath(u.name)} class="key-name">{u.name}</a>
      </td>
      <td>
        <QuotaBars bars={props.bars} />
      </td>
      <td class="num">{quota(u.maxConcurrent)}</td>
      <td>
        <a href={userPath(u.name)} data-manage={u.name}>Manage</a>{" "}
        <a href={`/admin?scope=user:${encodeURIComponent(u.name)}`}>Usage</a>
      </td>
    </tr>
  );
}

export async function usersSection(ctx: SectionContext) {
  const catalog = new Catalog(ctx.kv);
  const asked = ctx.query.get("user");
  if (asked !== null) {
    const user = await catalog.users.get(asked).catch((error) => {
      if (error instanceof RecordError) return undefined;
      throw error;
    });
    if (user) return userPage(ctx, user);
  }
  const users = await catalog.users.list();
  const bars = await quotaUses(ctx.kv, "user", users.map((u) => ({ id: u.name, quotas: u })), ctx.now);
  return (
    <>
      {asked === null
        ? null
        : <p class="notice error" role="alert" data-notice="error">No user named {asked}.</p>}
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
                : users.map((u) => <UserRow key={u.name} u={u} bars={bars.get(u.name)!} />)}
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
    </>
  );
}
