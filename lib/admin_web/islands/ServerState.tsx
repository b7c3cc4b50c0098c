/**
 * One server's health or capacity as a cell of the Servers page's table, kept current by the admin feed.
 * Rendered on the server with the state at page load; hydrated, it follows the feed's `health` event (the
 * same one the overview's cards follow) and picks its own server from it.
 */
import type { HealthView, ServerRow } from "../shared/views.ts";
import { ago, count, ms } from "../shared/format.ts";
import { useLiveFeed } from "../shared/live.ts";

export type StatePart = "health" | "capacity";

function Health({ s, now }: { s: ServerRow; now: number }) {
  if (!s.enabled) {
    return (
      <div data-server-health="disabled">
        <span class="badge disabled">disabled</span> <span class="muted">gets no requests</span>
      </div>
    );
  }
  return (
    <div data-server-health={s.health} data-breaker={s.breaker}>
      <span class={`badge ${s.health}`}>{s.health}</span>
      {s.breaker === "closed" ? null : (
        <>
          {" "}
          <span class={`badge breaker-${s.breaker}`} title="circuit breaker">breaker {s.breaker}</span>
        </>
      )}
      {s.lastProbeError ? <div class="error reason">{s.lastProbeError}</div> : null}
      <div class="muted">
        {s.lastProbeAt === undefined
          ? "not checked yet"
          : `checked ${ago(s.lastProbeAt, now)}${
            s.lastProbeMs === undefined ? "" : ` (${ms(s.lastProbeMs)})`
          }`}
      </div>
    </div>
  );
}

function Capacity({ s }: { s: ServerRow }) {
  return (
    <div data-server-slots={s.slots ?? ""} data-source={s.slotsSource ?? ""}>
      {s.slots === undefined ? "– slots" : `${count(s.slots)} slots`}
      {s.slotsSource ? <span class="muted">{` ${s.slotsSource}`}</span> : null}
      <div class="muted">{count(s.inFlight)} in flight</div>
    </div>
  );
}

/** Before the first feed event no view is known: the rendered row holds until then. */
const NO_VIEW = undefined as HealthView | undefined;

export default function ServerState(props: { part: StatePart; initial: ServerRow; at: number }) {
  const view = useLiveFeed().value("health", NO_VIEW).value;
  const s = view?.servers.find((row) => row.name === props.initial.name) ?? props.initial;
  return props.part === "health" ? <Health s={s} now={view?.at ?? props.at} /> : <Capacity s={s} />;
}
