/**
 * @module A key's or user's use against its token quotas, drawn as one `<meter>` per capped period with the
 * figures beside it: a meter needs no script and no inline style (the page's CSP allows none), and a screen
 * reader reads it as a gauge.
 */
import { count, utc } from "./shared/format.ts";
import type { QuotaBar } from "./quota_use.ts";

const PERIOD_LABEL = { day: "Today", week: "This week", month: "This month" } as const;

export function QuotaBars({ bars }: { bars: QuotaBar[] }) {
  if (bars.length === 0) return <span class="muted">no quota</span>;
  return (
    <div class="quota-bars">
      {bars.map((b) => {
        const share = b.cap === 0 ? 1 : b.used / b.cap;
        const state = share >= 1 ? "over" : share >= 0.8 ? "near" : "ok";
        return (
          <div
            key={b.period}
            class={`quota ${state}`}
            data-quota={b.period}
            data-used={b.used}
            data-cap={b.cap}
          >
            <span class="quota-period">{PERIOD_LABEL[b.period]}</span>
            <meter
              min={0}
              max={b.cap}
              value={Math.min(b.used, b.cap)}
              low={b.cap * 0.8}
              high={b.cap * 0.999}
              optimum={0}
              title={`${count(b.used)} of ${count(b.cap)} tokens; resets ${utc(b.resets)} UTC`}
            />
            <span class="quota-figures">
              {count(b.used)} / {count(b.cap)}{" "}
              {state === "over" ? <strong class="error">used up</strong> : `(${Math.floor(share * 100)} %)`}
            </span>
          </div>
        );
      })}
    </div>
  );
}
