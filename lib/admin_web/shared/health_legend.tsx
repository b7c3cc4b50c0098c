/**
 * @module What the server states mean, beside every place that shows them: a red "open" badge alone tells a
 * new admin nothing. The Servers page passes the gateway's breaker settings so the legend gives the figures.
 */
import { ms } from "./format.ts";

export interface BreakerSettings {
  failures: number;
  openMs: number;
  probeEveryMs: number;
}

export function HealthLegend({ settings }: { settings?: BreakerSettings }) {
  const failures = settings ? `${settings.failures} failures in a row` : "several failures in a row";
  const wait = settings ? ms(settings.openMs) : "a while";
  const probe = settings ? ` (every ${ms(settings.probeEveryMs)})` : "";
  return (
    <details class="legend" data-legend>
      <summary>What the states mean</summary>
      <dl>
        <div>
          <dt>
            <span class="badge up">up</span> <span class="badge down">down</span>
          </dt>
          <dd>
            The last health check{probe}{" "}
            passed or failed; a failed one says why. A server that is down gets no requests.
          </dd>
        </div>
        <div>
          <dt>
            <span class="badge unknown">unknown</span>
          </dt>
          <dd>Not checked yet (just added, or the gateway just started).</dd>
        </div>
        <div>
          <dt>
            <span class="badge disabled">disabled</span>
          </dt>
          <dd>Turned off by an admin: never sent requests, whatever its health.</dd>
        </div>
        <div>
          <dt>
            <span class="badge breaker-closed-shown">closed</span>
          </dt>
          <dd>Circuit breaker closed: requests flow normally (the badge is then left out).</dd>
        </div>
        <div>
          <dt>
            <span class="badge breaker-open">open</span>
          </dt>
          <dd>
            After {failures} (or a failed health check) the breaker opens: the server is skipped for{" "}
            {wait}, and requests go to other servers.
          </dd>
        </div>
        <div>
          <dt>
            <span class="badge breaker-half-open">half-open</span>
          </dt>
          <dd>
            The wait is over: one trial request is let through. If it succeeds the breaker closes, if it fails
            it opens again.
          </dd>
        </div>
        <div>
          <dt>Slots</dt>
          <dd>
            Requests the server runs at once; more wait at the gateway. <em>declared</em>: set by an admin;
            {" "}
            <em>discovered</em>: reported by the server; <em>learned</em>: seen by the gateway.
          </dd>
        </div>
      </dl>
    </details>
  );
}
