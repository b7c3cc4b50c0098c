/**
 * @module A periodic summary of the requests that did not end well: once a minute, if there were any, one
 * line counting the refusals (status `rejected`: 401, 403, 429, ...) and the failures (`error`, `partial`) by
 * error code. An admin sees that clients are being turned away, and why, without an access log; a refusal
 * storm costs one line a minute, not one a request.
 *
 * It sees every usage record; an answered request costs one comparison.
 */
import type { UsageRecord } from "../usage/types.ts";
import { log } from "../log/mod.ts";

export const SUMMARY_INTERVAL_MS = 60_000;

export class RequestSummary {
  /** `status:code` → count, since the last line. */
  #counts = new Map<string, number>();
  #timer?: ReturnType<typeof setInterval>;

  constructor(intervalMs = SUMMARY_INTERVAL_MS) {
    this.#timer = setInterval(() => this.flush(), intervalMs);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  readonly see = (record: UsageRecord): void => {
    if (record.status === "ok") return;
    const key = `${record.status}:${record.errorCode ?? record.httpStatus}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  };

  /** Writes the line for what was counted, if anything, and starts counting afresh. */
  flush(): void {
    if (this.#counts.size === 0) return;
    const counts = [...this.#counts].sort((a, b) => b[1] - a[1]);
    this.#counts = new Map();
    const total = (statuses: string[]) =>
      counts.reduce((sum, [key, n]) => statuses.includes(key.split(":")[0]) ? sum + n : sum, 0);
    const refused = total(["rejected"]);
    const failed = total(["error", "partial"]);
    const codes = (statuses: string[]) =>
      counts.filter(([key]) => statuses.includes(key.split(":")[0]))
        .map(([key, n]) => `${key.startsWith("partial:") ? key : key.slice(key.indexOf(":") + 1)}=${n}`)
        .join(" ") || undefined;
    const fields = {
      refused,
      failed,
      refusedCodes: codes(["rejected"]),
      failedCodes: codes(["error", "partial"]),
    };
    const message = `${refused} refused, ${failed} failed or cut short since the last summary`;
    if (failed > 0) log.warn("requests.summary", message, fields);
    else log.info("requests.summary", message, fields);
  }

  /** Writes what is left and stops. */
  close(): void {
    clearInterval(this.#timer);
    this.flush();
  }
}
