/**
 * @module Draining at shutdown. Every request passes through `handle`, which counts it until both its
 * handler has answered and its response has been delivered (or the client has gone), and gives it a cut
 * (`lib/http/request_cut.ts`) that aborts when the drain cuts. `stop` waits for the count to reach zero within the grace period; then
 * what still runs is ended: open streams in their face's error form (recorded `partial` with their tokens,
 * like a broken stream), requests still waiting on a backend aborted (answered 503 and recorded as errors).
 * When `stop` returns every request has reported its usage record, so the ledger's last flush writes them
 * all. A request that still comes once stopping (on a connection kept alive from before the signal) is not
 * run: its route is handed `STOPPED` for its cut and refuses it in the path's own face, recording the
 * refusal like any other (`lib/server/stopping_refusal.ts`); it is counted like a running request, so `stop`
 * waits for its record too. Such requests come most often just after the last answers: their clients send
 * the next request as soon as they have read one, so `stop` lingers a moment after those answers for them.
 */
import { ShuttingDown } from "../errors.ts";
import { isFeed } from "../http/feed_response.ts";
import { Running, RunningList, WATCH_AFTER_MS } from "./running_requests.ts";
import { type Cut, RequestCut } from "../runtime/request_cut.ts";
import { type OpenStreams, openStreams } from "../http/stream_response.ts";

/**
 * The cut a request gets in place of its own once the drain stops: already aborted, with `ShuttingDown`.
 * The app tells it by identity (one comparison, nothing for a request served as usual) and answers with the
 * route's refusal instead of running the request. Every refused request shares it, so a refusal never
 * listens to it (a listener would stay for the life of the process).
 */
export const STOPPED: Cut = RequestCut.made(new ShuttingDown());

export interface DrainOptions {
  /** How long running requests may take to finish once the gateway stops. */
  graceMs: number;
  /** How long ended requests get to send their last bytes (a client that reads nothing would hold on). */
  cutMs?: number;
  /** How long `stop` waits after the last answer it let finish for requests following it (see `#linger`). */
  lingerMs?: number;
  streams?: OpenStreams;
  log?: (line: string) => void;
}

export interface DrainReport {
  /** Requests still running when the grace period ended, which the drain ended. */
  cut: number;
  /** Requests whose responses were still undelivered when the drain gave up waiting. */
  abandoned: number;
}

export class Drain {
  #inFlight = 0;
  #stopping = false;
  /**
   * One cut per running request rather than a signal depending on a shared one: a dependent signal with a
   * listener left on it lives as long as its sources, so a process-long source would keep every request's
   * signal alive.
   */
  readonly #running = new RunningList();
  #sweep?: ReturnType<typeof setInterval>;
  /** Requests that answered with an open-ended body other than a chat stream (the admin page's live feed). */
  readonly #feeds = new Set<RequestCut>();
  readonly #hurry = Promise.withResolvers<void>();
  readonly #idle = new Set<() => void>();
  readonly #graceMs: number;
  readonly #cutMs: number;
  readonly #lingerMs: number;
  readonly #streams: OpenStreams;
  readonly #log: (line: string) => void;

  constructor(options: DrainOptions) {
    this.#graceMs = options.graceMs;
    this.#cutMs = options.cutMs ?? 2_000;
    this.#lingerMs = options.lingerMs ?? LINGER_MS;
    this.#streams = options.streams ?? openStreams;
    this.#log = options.log ?? ((line) => console.error(line));
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Runs `handler` for `request` as a counted request, with a cut that aborts when the client leaves or
   * the drain cuts. Once stopping, the handler gets `STOPPED` instead, for its route to refuse the request
   * (one can still come on a connection kept alive from before the signal): a request taken now could not be
   * given its time.
   */
  handle(
    request: Request,
    delivered: Promise<void>,
    handler: (cut: Cut) => Response | Promise<Response>,
  ): Response | Promise<Response> {
    if (this.#stopping) return this.#refuse(delivered, handler);
    this.#inFlight++;
    const running = new Running(request);
    this.#running.add(running);
    this.#watchSoon();
    let answered: Promise<Response>;
    try {
      // The cut is handed over beside the request rather than in a copy of it: a copy costs every request.
      answered = Promise.resolve(handler(running.abort));
    } catch (error) {
      answered = Promise.reject(error);
    }
    let pending = 2;
    const settle = () => {
      if (--pending) return;
      running.unwatch();
      this.#running.delete(running);
      if (running.feed) this.#feeds.delete(running.abort);
      this.#release();
    };
    answered.then((response) => {
      if (isFeed(response)) {
        running.feed = true;
        this.#feeds.add(running.abort);
      }
      settle();
    }, settle);
    delivered.then(settle, settle);
    return answered;
  }

  /**
   * A request that came once stopping, refused by its route: counted until its answer is delivered, so that
   * `stop` returns only after its record was taken and its last bytes sent. Nothing runs to be cut.
   */
  #refuse(
    delivered: Promise<void>,
    handler: (cut: Cut) => Response | Promise<Response>,
  ): Promise<Response> {
    this.#inFlight++;
    let answered: Promise<Response>;
    try {
      answered = Promise.resolve(handler(STOPPED));
    } catch (error) {
      answered = Promise.reject(error);
    }
    let pending = 2;
    const settle = () => {
      if (!--pending) this.#release();
    };
    answered.then(settle, settle);
    delivered.then(settle, settle);
    return answered;
  }

  /**
   * Starts the sweep that watches for clients leaving requests that are taking a while. A request's own
   * `signal` costs as much as the rest of a short request's passage through the listener, so it is only
   * subscribed to once the request has run for `WATCH_AFTER_MS`: a client that leaves a long answer still
   * stops its backend work within a sweep, and a quick answer never pays for the subscription.
   */
  #watchSoon(): void {
    if (this.#sweep !== undefined) return;
    this.#sweep = setInterval(() => {
      // Stopped here rather than when the last request settles, so steady traffic never re-arms the timer.
      if (this.#running.empty) {
        clearInterval(this.#sweep);
        this.#sweep = undefined;
        return;
      }
      const due = performance.now() - WATCH_AFTER_MS;
      for (const running of this.#running) if (running.since <= due) running.watch();
    }, WATCH_AFTER_MS);
  }

  /** A second signal: stop waiting for the grace period and end what runs now. */
  hurry(): void {
    this.#hurry.resolve();
  }

  /**
   * Stops taking requests, waits for the running ones within the grace period, then ends the rest; lingers
   * after them for the requests their clients send next.
   */
  async stop(): Promise<DrainReport> {
    this.#stopping = true;
    // A feed never ends by itself and carries nothing to account: it would only hold the stop for the whole
    // grace period. Aborting a finished answer's cut changes nothing, as its handler is done with it.
    for (const abort of this.#feeds) abort.abort(new ShuttingDown());
    // Only connections with an answer under way stay open once the listener closes: none, nothing follows.
    const answering = this.#inFlight > 0;
    if (answering) {
      this.#log(`gateway: stopping; waiting up to ${this.#graceMs} ms for ${this.#inFlight} request(s)`);
    }
    const report = await this.#drain();
    if (answering && !report.abandoned) await this.#linger();
    return report;
  }

  async #drain(): Promise<DrainReport> {
    if (await this.#settled(this.#graceMs)) return this.#end(0);
    const cut = this.#inFlight;
    this.#log(`gateway: ending ${cut} request(s) still running after the shutdown grace period`);
    this.#end(cut);
    // Not skipped by a second signal: an aborted request reports its record while it answers. Cutting cannot
    // hurry a client that reads nothing, though; past this bound its connection dies with the process.
    const abandoned = await this.#settled(this.#cutMs, false) ? 0 : this.#inFlight;
    if (abandoned) this.#log(`gateway: ${abandoned} response(s) could not be delivered before exit`);
    return { cut, abandoned };
  }

  /**
   * A client that has just read its answer may be sending its next request on the same connection already;
   * one that arrived after `stop` returned would be answered after the ledger's last flush, its record lost
   * to the exit. So `stop` waits `lingerMs` more, refusing (and recording) what comes meanwhile, then for
   * those refusals to be delivered. Refusals close their connections, so nothing follows them. A second
   * signal skips the wait.
   */
  async #linger(): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    const timer = setTimeout(resolve, this.#lingerMs);
    this.#hurry.promise.then(() => resolve());
    await promise;
    clearTimeout(timer);
    await this.#settled(this.#cutMs, false);
  }

  /** Ends open streams and aborts waiting requests; a stream that opens from now on ends at once. */
  #end(cut: number): DrainReport {
    const error = new ShuttingDown();
    this.#streams.endAll(error);
    for (const running of [...this.#running]) running.abort.abort(error);
    return { cut, abandoned: 0 };
  }

  #release(): void {
    if (--this.#inFlight > 0) return;
    for (const resolve of this.#idle) resolve();
    this.#idle.clear();
  }

  /** True once nothing is in flight; false if `ms` passed first or (when `hurried`) a second signal came. */
  #settled(ms: number, hurried = true): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true);
    const { promise, resolve } = Promise.withResolvers<boolean>();
    const idle = () => resolve(true);
    this.#idle.add(idle);
    const timer = setTimeout(() => resolve(false), ms);
    if (hurried) this.#hurry.promise.then(() => resolve(false));
    return promise.finally(() => {
      clearTimeout(timer);
      this.#idle.delete(idle);
    });
  }
}

/**
 * The drain's linger after the last answers (see `Drain.#linger`): a client sends its next request within
 * milliseconds of reading an answer; this leaves room for a loaded machine, and a stop is that much longer.
 */
const LINGER_MS = 500;
