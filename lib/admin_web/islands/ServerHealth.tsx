/**
 * Every server's health, breaker and load, kept current by the admin feed. Rendered on the server with the
 * state at page load, so it reads without JavaScript; hydrated, it follows the feed.
 */
import type { HealthView, ServerRow } from "../shared/views.ts";
import { ago, count, ms } from "../shared/format.ts";
import { useLiveFeed } from "../shared/live.ts";
import { HealthLegend } from "../shared/health_legend.tsx";

function healthLabel(s: ServerRow): string {
  return s.enabled ? s.health : "disabled";
}

function Models({ label, names }: { label: string; names?: string[] }) {
  return (
    <div class="models">
      <dt>{label}</dt>
      <dd>{names === undefined ? "–" : names.length === 0 ? "none" : names.join(", ")}</dd>
    </div>
  );
}

function ServerCard({ s, now }: { s: ServerRow; now: number }) {
  const health = healthLabel(s);
  return (
    <article class="server" data-server={s.name} data-health={health}>
      <header>
        <h3>{s.name}</h3>
        <span class={`badge ${health}`}>{health}</span>
        <span class={`badge breaker-${s.breaker}`} title="circuit breaker">breaker {s.breaker}</span>
      </header>
      <p class="meta">{s.kind} · weight {s.weight}{s.version ? ` · v${s.version}` : ""}</p>
      <dl>
        <Models label="Configured" names={s.configured} />
        <Models label="Carried" names={s.carried} />
        <Models label="Loaded" names={s.loaded} />
        <div>
          <dt>In flight / slots</dt>
          <dd>
            <span class="in-flight">{count(s.inFlight)}</span>
            {" / "}
            <span class="slots" data-source={s.slotsSource}>
              {s.slots === undefined ? "–" : count(s.slots)}
            </span>
            {s.slotsSource ? ` (${s.slotsSource})` : ""}
          </dd>
        </div>
        <div>
          <dt>Last minute</dt>
          <dd>{count(s.requestsLastMinute)} requests, {count(s.errorsLastMinute)} errors</dd>
        </div>
        <div>
          <dt>Latency p50 / p95</dt>
          <dd>{ms(s.latencyP50Ms)} / {ms(s.latencyP95Ms)}</dd>
        </div>
        <div>
          <dt>Last probe</dt>
          <dd>
            {ago(s.lastProbeAt, now)}
            {s.lastProbeMs !== undefined ? ` (${ms(s.lastProbeMs)})` : ""}
            {s.lastProbeError ? <span class="error">{` ${s.lastProbeError}`}</span> : null}
          </dd>
        </div>
      </dl>
    </article>
  );
}

/** Requests waiting at the gateway for a free server slot, per model; only shown while any wait. */
function WaitQueues({ queues }: { queues: NonNullable<HealthView["queues"]> }) {
  return (
    <div class="queues" data-queues={queues.length}>
      <h3>Waiting for a free server</h3>
      <table>
        <thead>
          <tr>
            <th>Model</th>
            <th class="num">Waiting</th>
            <th class="num">Longest wait</th>
          </tr>
        </thead>
        <tbody>
          {queues.map((q) => (
            <tr key={q.model} data-model={q.model}>
              <td>{q.model}</td>
              <td class="num queue-depth">{count(q.depth)}</td>
              <td class="num">{ms(q.oldestWaitMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default function ServerHealth(props: { initial: HealthView }) {
  const live = useLiveFeed();
  const view = live.value("health", props.initial).value;
  const feed = live.state.value;
  const up = view.servers.filter((s) => s.enabled && s.health === "up").length;
  const unchecked = view.servers.filter((s) => s.enabled && s.health === "unknown").length;
  return (
    <section class="panel" aria-labelledby="servers-title">
      <header class="panel-head">
        <h2 id="servers-title">Servers</h2>
        <span class="summary" data-servers-summary>
          {up} of {view.servers.length} up{unchecked ? `, ${unchecked} not checked yet` : ""}
        </span>
        <span class={`feed ${feed}`} data-feed={feed}>{feed}</span>
      </header>
      {view.servers.length === 0
        ? (
          <p class="empty">
            No servers yet: add one with <code>deno task admin server add</code>.
          </p>
        )
        : (
          <div class="servers">
            {view.servers.map((s) => <ServerCard key={s.name} s={s} now={view.at} />)}
          </div>
        )}
      {view.queues?.length ? <WaitQueues queues={view.queues} /> : null}
      {view.servers.length === 0 ? null : <HealthLegend />}
    </section>
  );
}
