/** @module The audit section: the latest changes from the CLI, the page and the API, newest first. */
import { listAudit } from "../audit/mod.ts";
import { listKeys } from "../store/keys.ts";
import { actorLabel, ChangeList } from "./audit_changes.tsx";
import { utc } from "./shared/format.ts";
import { keyPath } from "./key_page.tsx";
import type { SectionContext } from "./section_pages.tsx";

const SHOWN = 200;

/** What a change was made to: a key by its name and hint (linked to its page), anything else by its name. */
function Target(props: { action: string; target: string; keys: Map<string, string> }) {
  const name = props.action.startsWith("key.") ? props.keys.get(props.target) : undefined;
  if (name === undefined) return <span>{props.target}</span>;
  return (
    <span>
      <a href={keyPath(props.target)}>{name}</a>
      <div class="muted">
        <code>{props.target}</code>
      </div>
    </span>
  );
}

export async function auditSection(ctx: SectionContext) {
  const records = await listAudit(ctx.kv, { limit: SHOWN });
  const keys = new Map(
    (await listKeys(ctx.kv)).map((k) => [k.id, k.name ? `${k.name} (${k.hint})` : k.hint]),
  );
  return (
    <section class="panel" aria-labelledby="audit-title">
      <header class="panel-head">
        <h2 id="audit-title">Audit trail</h2>
        <span class="summary">
          the latest {SHOWN}; all of them with <code>deno task admin audit</code>
        </span>
      </header>
      <div class="table-wrap">
        <table data-table="audit" class="audit">
          <thead>
            <tr>
              <th>Time (UTC)</th>
              <th>By</th>
              <th>Action</th>
              <th>Target</th>
              <th>Changes</th>
            </tr>
          </thead>
          <tbody>
            {records.length === 0
              ? (
                <tr>
                  <td colSpan={5} class="empty">No changes recorded yet.</td>
                </tr>
              )
              : records.map((r) => (
                <tr key={r.id} data-audit={r.action}>
                  <td>{utc(r.time)}</td>
                  <td class="wrap">{actorLabel(r.actor)}</td>
                  <td>{r.action}</td>
                  <td class="wrap">
                    <Target action={r.action} target={r.target} keys={keys} />
                  </td>
                  <td class="wrap changes-cell">
                    <ChangeList changes={r.changes} />
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
