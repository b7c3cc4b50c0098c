/**
 * Requests and tokens per key and per user for the current day, week and month, and the latest requests
 * that ended partial or failed and the latest refused. Each table ends with the rows that make it add up to
 * the totals (other keys, no user, no key) and a total row. Follows the admin feed once hydrated; the period
 * tabs need JavaScript, the rendered page shows today.
 */
import { useSignal } from "@preact/signals";
import type { RecentProblem, Tally, UsageRow, UsageView } from "../shared/views.ts";
import { count, utc } from "../shared/format.ts";
import { useLiveFeed } from "../shared/live.ts";

type Period = "day" | "week" | "month";
type Tallies = Record<Period, Tally>;
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

/** A row that is not one key or user: the rest, or requests no key or user could be named for. */
interface ExtraRow {
  id: string;
  label: string;
  note: string;
  tallies: Tallies;
}

function UsageTable(
  props: {
    caption: string;
    rows: UsageRow[];
    extra: ExtraRow[];
    totals: Tallies;
    period: Period;
    withUser?: boolean;
    /** Where a row's name leads: the key's or user's own page. */
    link?: (id: string) => string;
  },
) {
  const span = props.withUser ? 2 : 1;
  const extra = props.extra.filter((row) => PERIODS.some(([p]) => row.tallies[p].requests > 0));
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
          {props.rows.length === 0 && extra.length === 0
            ? (
              <tr>
                <td colSpan={span + 4} class="empty">No requests yet.</td>
              </tr>
            )
            : null}
          {props.rows.map((row) => (
            <tr key={row.id} data-row={row.id}>
              <td>{props.link ? <a href={props.link(row.id)}>{row.label}</a> : row.label}</td>
              {props.withUser ? <td>{row.user ?? "–"}</td> : null}
              <TallyCells t={row[props.period]} />
            </tr>
          ))}
          {extra.map((row) => (
            <tr key={row.id} data-row={row.id} class="extra">
              <td colSpan={span}>
                {row.label} <span class="muted">{row.note}</span>
              </td>
              <TallyCells t={row.tallies[props.period]} />
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr data-row="total">
            <th scope="row" colSpan={span}>All requests</th>
            <TallyCells t={props.totals[props.period]} />
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

function Requests({ rows, caption, name }: { rows: RecentProblem[]; caption: string; name: string }) {
  return (
    <div class="table-wrap">
      <table data-table={name}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th>Time (UTC)</th>
            <th>Key</th>
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
                <td colSpan={7} class="empty">None.</td>
              </tr>
            )
            : rows.map((r, i) => (
              <tr key={`${r.time}-${i}`} data-key-id={r.keyId ?? ""}>
                <td>{utc(r.time)}</td>
                <td>{r.key ?? <span class="muted">no key</span>}</td>
                <td>
                  <span class={`badge ${r.status}`}>{r.status}</span>{" "}
                  <span class="muted">{r.httpStatus}</span>
                  {r.count ? <span class="muted" data-count={r.count}>{` × ${count(r.count)}`}</span> : null}
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
  const view = useLiveFeed().value("usage", props.initial).value;
  const period = useSignal<Period>("day");
  const totals = view.totals[period.value];
  const noKey: ExtraRow = {
    id: "no-key",
    label: "No key",
    note: "refused before a key was found (past a few a minute, only the metrics count them)",
    tallies: view.noKey,
  };
  const keyExtra = view.otherKeys
    ? [{ id: "other-keys", label: "Other keys", note: "beyond the busiest", tallies: view.otherKeys }, noKey]
    : [noKey];
  const userExtra = [
    { id: "no-user", label: "No user", note: "keys that belong to no user", tallies: view.noUser },
    noKey,
  ];
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
      <UsageTable
        caption="Top keys"
        rows={view.keys}
        extra={keyExtra}
        totals={view.totals}
        period={period.value}
        withUser
        link={(id) => `/admin/keys?key=${encodeURIComponent(id)}`}
      />
      <UsageTable
        caption="Users"
        rows={view.users}
        extra={userExtra}
        totals={view.totals}
        period={period.value}
        link={(name) => `/admin/users?user=${encodeURIComponent(name)}`}
      />
      <Requests rows={view.recent} caption="Latest failed and partial requests" name="recent" />
      <Requests rows={view.rejected} caption="Latest refused requests" name="rejected" />
    </section>
  );
}
