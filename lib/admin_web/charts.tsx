/**
 * @module The usage charts: bars drawn as inline SVG on the server, so they need no script, no font and
 * nothing from outside the gateway, and read the same in a browser without JavaScript.
 */
import { count } from "./shared/format.ts";
import type { Point, Scope, Series } from "./usage_series.ts";

/**
 * The drawing is scaled to the chart's width, and its text with it: the view box is about as wide as a chart
 * is drawn (one of three columns, or a phone's width), so the 13-unit axis labels show at 11 px or more.
 */
const W = 360;
const H = 160;
const PAD = { left: 46, right: 16, top: 12, bottom: 26 };

/** 1, 2, 5, 10, 20, 50… at or above `max`, so the axis reads in round numbers. */
function niceCeiling(max: number): number {
  if (max <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * magnitude).find((step) => step >= max)!;
}

function short(n: number): string {
  return n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n);
}

function label(start: number, unit: "hour" | "day"): string {
  const iso = new Date(start).toISOString();
  return unit === "hour" ? `${iso.slice(11, 13)}:00` : iso.slice(5, 10);
}

export function BarChart(
  props: { title: string; points: Point[]; value: "requests" | "tokens"; unit: "hour" | "day" },
) {
  const { points, value, unit } = props;
  const top = niceCeiling(Math.max(...points.map((p) => p[value])));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / points.length;
  const every = unit === "hour" ? 12 : 7;
  const total = points.reduce((sum, p) => sum + p[value], 0);
  return (
    <figure class="chart" data-chart={`${value}-per-${unit}`}>
      <figcaption>
        {props.title} <span class="muted">({count(total)} in all)</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${props.title}: ${count(total)} in all`}>
        {[0, 0.5, 1].map((f) => {
          const y = PAD.top + plotH * (1 - f);
          return (
            <g key={f} class="grid">
              <line x1={PAD.left} x2={W - PAD.right} y1={y} y2={y} />
              <text x={PAD.left - 5} y={y + 5} text-anchor="end">{short(top * f)}</text>
            </g>
          );
        })}
        {points.map((p, i) => {
          const h = plotH * p[value] / top;
          const x = PAD.left + i * slot;
          return (
            <g key={p.start}>
              {p[value] > 0
                ? (
                  <rect class="bar" x={x + slot * 0.15} y={PAD.top + plotH - h} width={slot * 0.7} height={h}>
                    <title>
                      {`${new Date(p.start).toISOString().slice(0, unit === "hour" ? 13 : 10)}: ${
                        count(p[value])
                      } ${value}`}
                    </title>
                  </rect>
                )
                : null}
              {(points.length - 1 - i) % every === 0
                ? (
                  <text class="axis" x={x + slot / 2} y={H - 7} text-anchor="middle">
                    {label(p.start, unit)}
                  </text>
                )
                : null}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

export function UsageCharts(
  props: { series: Series; scope: Scope; scopes: { value: Scope; label: string }[] },
) {
  const { series } = props;
  return (
    <section class="panel" aria-labelledby="charts-title" data-charts={props.scope}>
      <header class="panel-head">
        <h2 id="charts-title">Usage over time (UTC)</h2>
        <form method="get" action="/admin" class="scope">
          <select name="scope" aria-label="Whose usage">
            <option value="all">Whole gateway</option>
            {props.scopes.map((s) => (
              <option key={s.value} value={s.value} selected={s.value === props.scope}>{s.label}</option>
            ))}
          </select>
          <button type="submit">Show</button>
        </form>
      </header>
      <div class="charts">
        <BarChart
          title="Requests per hour, last 48 hours"
          points={series.hours}
          value="requests"
          unit="hour"
        />
        <BarChart title="Tokens per hour, last 48 hours" points={series.hours} value="tokens" unit="hour" />
        <BarChart title="Requests per day, last 30 days" points={series.days} value="requests" unit="day" />
        <BarChart title="Tokens per day, last 30 days" points={series.days} value="tokens" unit="day" />
      </div>
    </section>
  );
}
