/**
 * @module What a failed attempt at the admin token leaves behind: a count in /metrics, a line on stderr and an
 * `admin.login_failed` audit entry, never the value tried. A flood must not become a flood of lines and rows,
 * so attempts are gathered per address (an IPv6 client's /64, as the throttle counts it) and way in (bearer
 * header or login form) over a minute: the first writes its line and its audit entry at once, the rest are
 * counted, and when the minute is over the entry is rewritten with the minute's counts (and a line says
 * them). A flood from one address thus writes one entry and two lines a minute; from more than 1,000
 * addresses at once, the rest share one entry (`*`).
 */
import { type Actor, AUDIT_PREFIX, auditId, type AuditRecord } from "../audit/mod.ts";

/** How the token was presented. */
export type AuthVia = "bearer" | "form";
/** `wrong_token`: checked and wrong; `throttled`: refused unchecked while the address must wait. */
export type FailureReason = "wrong_token" | "throttled";

const WINDOW_MS = 60_000;
const MAX_WINDOWS = 1_000;

interface Window {
  via: AuthVia;
  record: AuditRecord;
  start: number;
  failures: number;
  throttled: number;
  /** The counts the stored entry holds. */
  written: string;
  /** Its last write. */
  writing: Promise<void>;
}

export interface FailedLoginsOptions {
  /** The store, as a request may wait for it. */
  kv: Deno.Kv;
  now: () => number;
  /** Told of every failure (the metrics). */
  count?: (via: AuthVia, reason: FailureReason) => void;
  log?: (line: string) => void;
}

export class FailedLogins {
  readonly #windows = new Map<string, Window>();
  readonly #writes = new Set<Promise<void>>();
  #timer?: ReturnType<typeof setTimeout>;
  #closed = false;

  constructor(private readonly options: FailedLoginsOptions) {}

  note(address: string | undefined, via: AuthVia, reason: FailureReason): void {
    this.options.count?.(via, reason);
    if (this.#closed) return;
    this.#flush(this.options.now());
    const shown = address ?? "unknown";
    let key = `${via} ${shown}`;
    if (!this.#windows.has(key) && this.#windows.size >= MAX_WINDOWS) key = `${via} *`;
    let window = this.#windows.get(key);
    if (!window) {
      window = this.#open(key === `${via} *` ? "*" : shown, via);
      this.#windows.set(key, window);
      this.#log(
        `admin: authentication failed (${via}) from ${window.record.actor.address}; further attempts from ` +
          "there within a minute are counted, not logged",
      );
    }
    if (reason === "throttled") window.throttled++;
    else window.failures++;
    if (window.written === "") this.#write(window);
    this.#arm();
  }

  /** Writes the open minutes' counts; nothing is gathered afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flush(Infinity);
    await Promise.all(this.#writes);
  }

  #open(address: string, via: AuthVia): Window {
    const start = this.options.now();
    const time = new Date(start);
    const actor: Actor = { kind: via === "form" ? "page" : "api", address };
    const record = {
      id: auditId(time),
      time: time.toISOString(),
      actor,
      action: "admin.login_failed",
      target: "admin",
      changes: {},
    };
    return { via, record, start, failures: 0, throttled: 0, written: "", writing: Promise.resolve() };
  }

  #counts(window: Window): string {
    return `${window.failures} ${window.throttled}`;
  }

  #write(window: Window): void {
    window.written = this.#counts(window);
    const record: AuditRecord = {
      ...window.record,
      changes: {
        failures: { after: window.failures },
        ...(window.throttled ? { throttled: { after: window.throttled } } : {}),
      },
    };
    // After the entry's earlier write, so the counts cannot be overwritten by the first ones. A commit, which
    // the store's link bounds on a network store: a plain `set` would wait out an outage.
    const write = window.writing = window.writing.then(() =>
      this.options.kv.atomic().set([AUDIT_PREFIX, record.id], record).commit()
    ).then(
      () => {},
      (error) => this.#log(`admin: the audit entry of failed logins could not be written: ${error}`),
    );
    this.#writes.add(write);
    write.finally(() => this.#writes.delete(write));
  }

  /**
   * Closes the minutes over by `end`, rewriting their entries if more attempts came after the first. Minutes
   * are opened in time order, and a Map keeps that order: the first one still open ends the search.
   */
  #flush(end: number): void {
    for (const [key, window] of this.#windows) {
      if (window.start + WINDOW_MS > end) break;
      this.#windows.delete(key);
      if (window.written === this.#counts(window)) continue;
      this.#write(window);
      const { failures, throttled, via, record } = window;
      this.#log(
        `admin: ${failures} failed and ${throttled} throttled authentication attempts (${via}) from ` +
          `${record.actor.address} in the minute from ${record.time}`,
      );
    }
  }

  #arm(): void {
    if (this.#timer !== undefined || this.#windows.size === 0) return;
    const first = this.#windows.values().next().value!.start;
    const wait = Math.max(first + WINDOW_MS - this.options.now(), 1_000);
    const timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flush(this.options.now());
      this.#arm();
    }, wait);
    // A gateway embedded by another program must not keep it alive for this.
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #log(line: string): void {
    (this.options.log ?? console.error)(line);
  }
}
