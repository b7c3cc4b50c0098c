/**
 * Requests and tokens per key and per user for the current day, week and month, and the latest requests
 * that ended partial or failed. Follows the admin feed once hydrated; the period tabs need JavaScript, the
 * rendered page shows today.
 */
import { useSignal } from "@preact/signals";
import type { RecentProblem, Tally, UsageRow, UsageView } from "../lib/admin_web/views.ts";
import { count, utc } from "../lib/admin_web/format.ts";
import { liveValue } from "../lib/admin_web/live.ts";

type Period = "day" | "week" | "month";
const PERIODS: [Period, string][] = [["day", "Today"], ["week", "This week"], ["month", "This month"]];

function TallyCells({ t }: { t: Tally }) {
  return (
    <>
      <td class="num">{count(t.requests)}</td>
      <td class="num">{count(t.failed)}</td>
      <td class="num">{count(t.promptTokens)}</td>
      <td class="num">{count(t.completionTokens)}</td>
    </>
  );
}

function UsageTable(props: { caption: string; rows: UsageRow[]; period: Period; withUser?: boolean }) {
  return (
    <div class="table-wrap">
      <table data-table={props.caption}>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th>Name</th>
            {props.withUser ? <th>User</th> : null}
            <th class="num">Requests</th>
            <th class="num">Not ok</th>
            <th class="num">Prompt tokens</th>
            <th class="num">Completion tokens</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0
            ? (
              <tr>
                <td colSpan={props.withUser ? 6 : 5} class="empty">No requests yet.</td>
              </tr>
            )
            : props.rows.map((row) => (
              <tr key={row.id} data-row={row.id}>
                <td>{row.label}</td>
                {props.withUser ? <td>{row.user ?? "–"}</td> : null}
                <TallyCells t={row[props.period]} />
              </tr>
            ))}
        </tbody>
      </table>
    </div>
  );
}

function Recent({ rows }: { rows: RecentProblem[] }) {
  return (
    <div class="table-wrap">
      <table data-table="recent">
        <caption>Latest partial and failed requests</caption>
        <thead>
          <tr>
            <th>Time (UTC)</th>
            <th>Status</th>
            <th>Code</th>
            <th>Server</th>
            <th>Format</th>
            <th class="num">Tokens</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0
            ? (
              <tr>
                <td colSpan={6} class="empty">None.</td>
              </tr>
            )
            : rows.map((r, i) => (
              <tr key={`${r.time}-${i}`}>
                <td>{utc(r.time)}</td>
                <td>
                  <span class={`badge ${r.status}`}>{r.status}</span>
                </td>
                <td>{r.code ?? "–"}</td>
                <td>{r.server ?? "–"}</td>
                <td>{r.format}</td>
                <td class="num">{count(r.tokens)}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </div>
  );
}

export default function Usage(props: { initial: UsageView }) {
  const view = liveValue("usage", props.initial).value;
  const period = useSignal<Period>("day");
  const totals = view.totals[period.value];
  return (
    <section class="panel" aria-labelledby="usage-title">
      <header class="panel-head">
        <h2 id="usage-title">Usage</h2>
        <nav class="tabs" role="tablist">
          {PERIODS.map(([name, label]) => (
            <button
              type="button"
              role="tab"
              aria-selected={period.value === name}
              onClick={() => period.value = name}
            >
              {label}
            </button>
          ))}
        </nav>
      </header>
      <p class="totals" data-totals>
        {view.periods[period.value].slice(2)}: {count(totals.requests)} requests ({count(totals.failed)}{" "}
        not ok), {count(totals.promptTokens + totals.completionTokens)} tokens
      </p>
      <UsageTable caption="Top keys" rows={view.keys} period={period.value} withUser />
      <UsageTable caption="Users" rows={view.users} period={period.value} />
      <Recent rows={view.recent} />
    </section>
  );
}
