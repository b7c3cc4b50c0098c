/** @module The audit section: the latest changes from the CLI and the page, newest first. */
import { actorText } from "../admin/audit_command.ts";
import { changesText, listAudit } from "../audit/mod.ts";
import { utc } from "./format.ts";
import type { SectionContext } from "./section_pages.tsx";

const SHOWN = 200;

export async function auditSection(ctx: SectionContext) {
  const records = await listAudit(ctx.kv, { limit: SHOWN });
  return (
    <section class="panel" aria-labelledby="audit-title">
      <header class="panel-head">
        <h2 id="audit-title">Audit trail</h2>
        <span class="summary">
          the latest {SHOWN}; all of them with <code>deno task admin audit</code>
        </span>
      </header>
      <div class="table-wrap">
        <table data-table="audit">
          <thead>
            <tr>
              <th>Time (UTC)</th>
              <th>Actor</th>
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
                  <td>{actorText(r.actor)}</td>
                  <td>{r.action}</td>
                  <td>
                    <code>{r.target}</code>
                  </td>
                  <td class="wrap">{changesText(r.changes)}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
