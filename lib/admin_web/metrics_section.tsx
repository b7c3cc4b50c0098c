/**
 * @module The console's metrics page: the gateway's main figures read from its own Prometheus text (the
 * same numbers a scraper sees at `/metrics`), every metric below them, and the raw text one link away
 * (`?raw`), shown inside the console so the way back is the top bar. These are this process's counters,
 * since it started; the usage pages show the whole fleet from the ledger.
 */
import type { Deps } from "../deps.ts";
import { count, ms } from "./shared/format.ts";
import { Families, type Family, labelsText } from "./metric_families.ts";
import type { SectionContext } from "./section_pages.tsx";

export interface MetricsRead {
  text: string;
  json: ConstructorParameters<typeof Families>[0];
}

export async function readMetrics(deps: Deps): Promise<MetricsRead | undefined> {
  if (!deps.metrics) return undefined;
  const registry = await deps.metrics.registry();
  const [text, json] = await Promise.all([registry.metrics(), registry.getMetricsAsJSON()]);
  return { text, json };
}

function Figure(props: { label: string; value: string; detail?: string; name: string }) {
  return (
    <div class="figure" data-figure={props.name}>
      <dt>{props.label}</dt>
      <dd>
        <span class="figure-value">{props.value}</span>
        {props.detail ? <span class="muted">{props.detail}</span> : null}
      </dd>
    </div>
  );
}

const parts = (rows: [string, number][]) =>
  rows.filter(([, n]) => n > 0).map(([k, n]) => `${k || "–"} ${count(n)}`).join(" · ");

const seconds = (s: number | undefined) =>
  s === undefined ? "–" : s === Infinity ? "> top bucket" : ms(s * 1000);

function MainFigures({ f }: { f: Families }) {
  const requests = f.total("gateway_requests_total");
  const duration = f.histogram("gateway_request_duration_seconds");
  const ttfb = f.histogram("gateway_time_to_first_byte_seconds");
  const up = f.samples("gateway_server_up");
  const upCount = up.filter((m) => m.value === 1).length;
  const open = f.samples("gateway_breaker_state").filter((m) =>
    m.labels?.state !== "closed" && m.value === 1
  );
  const storeUp = f.get("gateway_store_up");
  return (
    <dl class="figures">
      <Figure
        name="requests"
        label="Requests"
        value={count(requests)}
        detail={parts(f.by("gateway_requests_total", "outcome"))}
      />
      <Figure
        name="tokens"
        label="Tokens billed"
        value={count(f.total("gateway_tokens_total"))}
        detail={parts(f.by("gateway_tokens_total", "type"))}
      />
      <Figure
        name="refusals"
        label="Limit refusals"
        value={count(f.total("gateway_limit_refusals_total"))}
        detail={parts(f.by("gateway_limit_refusals_total", "reason"))}
      />
      <Figure
        name="duration"
        label="Request time"
        value={duration.mean === undefined ? "–" : `${seconds(duration.mean)} mean`}
        detail={duration.count ? `median ≤ ${seconds(duration.p50)} · 95 % ≤ ${seconds(duration.p95)}` : ""}
      />
      <Figure
        name="ttfb"
        label="Time to first byte"
        value={ttfb.mean === undefined ? "–" : `${seconds(ttfb.mean)} mean`}
        detail={ttfb.count ? `median ≤ ${seconds(ttfb.p50)} · 95 % ≤ ${seconds(ttfb.p95)}` : ""}
      />
      <Figure
        name="servers"
        label="Servers up"
        value={`${upCount} of ${up.length}`}
        detail={open.length
          ? `breaker ${open.map((m) => `${m.labels?.server} ${m.labels?.state}`).join(", ")}`
          : ""}
      />
      <Figure
        name="in-flight"
        label="In flight / waiting"
        value={`${count(f.total("gateway_server_in_flight"))} / ${count(f.total("gateway_queue_depth"))}`}
        detail={`${count(f.total("gateway_server_slots"))} slots`}
      />
      <Figure
        name="store"
        label="Store"
        value={storeUp === undefined ? "–" : f.total("gateway_store_up") === 1 ? "up" : "down"}
        detail={`${count(f.total("gateway_usage_backlog_records"))} records waiting to be written`}
      />
      <Figure
        name="accounting"
        label="Accounting failures"
        value={count(f.total("gateway_accounting_failures_total"))}
        detail={parts(f.by("gateway_accounting_failures_total", "stage"))}
      />
    </dl>
  );
}

function sampleValue(family: Family, m: Family["metrics"][number]): string {
  if (family.type === "histogram") {
    const n = m.count ?? 0;
    return n === 0 ? "0 observed" : `${count(n)} observed, mean ${seconds((m.sum ?? 0) / n)}`;
  }
  const v = m.value ?? 0;
  return Number.isInteger(v) ? count(v) : String(Number(v.toPrecision(4)));
}

function AllMetrics({ f }: { f: Families }) {
  return (
    <div class="table-wrap">
      <table data-table="metrics" class="metrics">
        <thead>
          <tr>
            <th>Metric</th>
            <th>Labels</th>
            <th class="num">Value</th>
          </tr>
        </thead>
        <tbody>
          {f.list.flatMap((family) =>
            (family.metrics.length ? family.metrics : [{}]).map((m, i) => (
              <tr key={`${family.name}-${i}`} data-metric={family.name}>
                {i === 0
                  ? (
                    <td rowSpan={Math.max(1, family.metrics.length)} class="wrap">
                      <code>{family.name}</code>
                      <div class="muted">{family.help}</div>
                    </td>
                  )
                  : null}
                <td class="wrap">{labelsText(m.labels)}</td>
                <td class="num">{family.metrics.length ? sampleValue(family, m) : "–"}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export async function metricsSection(ctx: SectionContext) {
  const metrics = await ctx.metrics();
  if (metrics === undefined) {
    return (
      <section class="panel" aria-labelledby="metrics-title">
        <h2 id="metrics-title">Metrics</h2>
        <p class="empty">Metrics are off on this gateway.</p>
      </section>
    );
  }
  if (ctx.query.has("raw")) {
    return (
      <section class="panel" aria-labelledby="metrics-title" data-metrics="raw">
        <header class="panel-head">
          <h2 id="metrics-title">Metrics: Prometheus text</h2>
          <a href="/admin/metrics">← Main figures</a>
          <a href="/metrics" class="push">Plain text for scrapers (/metrics)</a>
        </header>
        <pre class="raw">{metrics.text}</pre>
      </section>
    );
  }
  const families = new Families(metrics.json);
  return (
    <>
      <section class="panel" aria-labelledby="metrics-title" data-metrics="figures">
        <header class="panel-head">
          <h2 id="metrics-title">Metrics</h2>
          <span class="summary">this gateway process, since it started</span>
          <a href="/admin/metrics?raw" class="push" data-raw-link>Raw Prometheus text</a>
        </header>
        <MainFigures f={families} />
      </section>
      <section class="panel" aria-labelledby="all-metrics-title">
        <h2 id="all-metrics-title">Every metric</h2>
        <AllMetrics f={families} />
      </section>
    </>
  );
}
