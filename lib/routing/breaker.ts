/**
 * @module Circuit breaker for one server: decides whether a request may go to it now, from the outcomes of
 * earlier requests and from health probes. It knows nothing of HTTP, models or wire formats; time comes from
 * the injected clock only, so it never holds a timer.
 *
 * States: closed → open after `failureThreshold` consecutive failures → half-open once `openMs` have passed →
 * one trial request → closed on its success, open again (timer restarted) on its failure.
 *
 * Passes. `admit()` hands out a pass and the outcome is reported with it. Every state change starts a new
 * epoch, and an outcome whose pass belongs to an earlier epoch is ignored: a request admitted before the
 * breaker opened says nothing about the server after a trial closed it again. While half-open, `admit()`
 * claims the single trial in the same synchronous call that checks for it, so two concurrent callers can
 * never both get it. A trial that succeeds goes on as an ordinary request, so a failure it reports later (a
 * stream breaking midway) still counts.
 *
 * A trial that never reports (a cancelled or crashed caller) must not wedge the breaker. Callers that give up
 * without an outcome call `release(pass)`, which frees the trial at once and changes nothing else. As a
 * backstop the trial is leased for `trialLeaseMs` (default 120 s, the gateway's default first-byte timeout):
 * after that another trial may be admitted. A late outcome of the expired trial still counts while the
 * breaker is in the same half-open epoch, since it is still true evidence about the server.
 *
 * Probes. A failed probe trips the breaker open (timer restarted) at once: the server is unreachable, and when
 * it comes back it should get one trial request before full traffic, not a herd of cold requests. A passing
 * probe moves an open breaker to half-open early only when a probe failed during this open period, i.e. the
 * probes saw the server go away and come back (a restart): recovery then takes one probe interval instead of
 * `openMs`. When the breaker opened on request failures while probes kept passing, the server answers probes
 * but fails real work (out of memory, a broken model), so a passing probe proves nothing and the full `openMs`
 * wait applies; otherwise every probe would sacrifice one client request to a broken server. A probe never
 * closes the breaker: only a real request proves the server can chat.
 *
 * A named breaker (the server's) logs each change of state with its reason; changes are rare, so the request
 * path pays nothing for it.
 */
import { log } from "../log/mod.ts";

export type BreakerState = "closed" | "open" | "half-open";

export interface BreakerOptions {
  now: () => number;
  /** Consecutive failures that open the breaker. */
  failureThreshold?: number;
  /** How long the breaker stays open before it admits a trial. */
  openMs?: number;
  /** How long an unreported trial blocks the next one. */
  trialLeaseMs?: number;
  /** The server's name, for the log line of each change of state; unnamed, the breaker logs nothing. */
  name?: string;
}

/** Proof of admission; hand it back with the outcome. */
export interface Pass {
  /** This request is the half-open trial. */
  readonly trial: boolean;
}

class Grant implements Pass {
  constructor(public epoch: number, readonly trial: boolean) {}
}

export class Breaker {
  readonly failureThreshold: number;
  readonly openMs: number;
  readonly trialLeaseMs: number;
  readonly #now: () => number;
  readonly #name?: string;
  /** Stored state; an open breaker whose time is up reads as half-open and becomes so on the next admit. */
  #state: BreakerState = "closed";
  #epoch = 0;
  #failures = 0;
  #openUntil = 0;
  /** Every request admitted in one closed epoch shares this pass, so admission allocates nothing. */
  #closedPass = new Grant(0, false);
  #trial?: Grant;
  #trialExpires = 0;
  #probeFailedWhileOpen = false;

  constructor(options: BreakerOptions) {
    this.#now = options.now;
    this.#name = options.name;
    this.failureThreshold = options.failureThreshold ?? 5;
    this.openMs = options.openMs ?? 30_000;
    this.trialLeaseMs = options.trialLeaseMs ?? 120_000;
  }

  get state(): BreakerState {
    return this.#state === "open" && this.#now() >= this.#openUntil ? "half-open" : this.#state;
  }

  /** Consecutive failures counted while closed. */
  get failures(): number {
    return this.#failures;
  }

  /** Whether `admit()` would grant a pass now; claims nothing. */
  wouldAdmit(): boolean {
    switch (this.state) {
      case "closed":
        return true;
      case "open":
        return false;
      case "half-open":
        return this.#trialFree();
    }
  }

  /** A pass when a request may be sent now, claiming the trial when half-open; undefined otherwise. */
  admit(): Pass | undefined {
    switch (this.state) {
      case "closed":
        return this.#closedPass;
      case "open":
        return undefined;
      case "half-open":
        if (this.#state === "open") this.#enter("half-open", `open for ${this.openMs} ms: one trial request`);
        if (!this.#trialFree()) return undefined;
        this.#trial = new Grant(this.#epoch, true);
        this.#trialExpires = this.#now() + this.trialLeaseMs;
        return this.#trial;
    }
  }

  success(pass: Pass): void {
    if (!this.#current(pass)) return;
    if (this.#state === "closed") this.#failures = 0;
    else if (this.#state === "half-open" && pass.trial) {
      this.#enter("closed", "the trial request succeeded");
      // The trial goes on as an ordinary request: a stream of it breaking later counts as a failure.
      (pass as Grant).epoch = this.#epoch;
    }
  }

  failure(pass: Pass): void {
    if (!this.#current(pass)) return;
    if (this.#state === "closed") {
      if (++this.#failures >= this.failureThreshold) this.#open(`${this.#failures} consecutive failures`);
    } else if (this.#state === "half-open" && pass.trial) this.#open("the trial request failed");
  }

  /** The caller gave up without an outcome: frees the trial it held, if any. */
  release(pass: Pass): void {
    if (pass === this.#trial) this.#trial = undefined;
  }

  probeFailed(): void {
    this.#open("the health probe failed");
    this.#probeFailedWhileOpen = true;
  }

  probePassed(): void {
    if (this.#state === "open" && this.#probeFailedWhileOpen) {
      this.#enter("half-open", "the health probe passed again: one trial request");
    }
  }

  #current(pass: Pass): boolean {
    return pass instanceof Grant && pass.epoch === this.#epoch;
  }

  #trialFree(): boolean {
    return this.#trial === undefined || this.#now() >= this.#trialExpires;
  }

  #open(reason: string): void {
    this.#enter("open", reason);
    this.#openUntil = this.#now() + this.openMs;
  }

  #enter(state: BreakerState, reason: string): void {
    if (this.#name !== undefined && state !== this.#state) {
      const fields = { server: this.#name, from: this.#state, to: state, reason };
      if (state === "open") log.warn("breaker.open", `${this.#name}: circuit open, ${reason}`, fields);
      else log.info(`breaker.${state}`, `${this.#name}: circuit ${state}, ${reason}`, fields);
    }
    this.#state = state;
    this.#epoch++;
    this.#failures = 0;
    this.#trial = undefined;
    this.#probeFailedWhileOpen = false;
    if (state === "closed") this.#closedPass = new Grant(this.#epoch, false);
  }
}
