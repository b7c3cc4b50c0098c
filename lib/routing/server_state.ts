/**
 * @module The one place holding each server's live state: probe health, breaker, in-flight requests,
 * last-minute request and error counts, recent latency, and the models it carries and has loaded. Routing asks
 * it whether a server may be used; the admin page and metrics read `status()`. It knows server names and
 * model tags only: never URLs, keys or wire formats, so nothing it holds can leak a backend address.
 *
 * `begin`, `answered` and `finish` run on every request, so they do constant work and allocate one ticket.
 * Listeners hear the name of the server that changed, on every change, synchronously: they must only mark
 * something dirty (an SSE feed coalesces and pushes on its own tick). Time-driven drift (the minute window
 * sliding, an open breaker's time running out) raises no event; `status()` computes it when read, so a feed
 * that re-reads at least every second shows it in time.
 */
import { Breaker } from "./breaker.ts";
import { LatencyRing } from "./load_window.ts";
import { outcomeOf, type ServerStateOptions, type Slots } from "./server_options.ts";
import type { ModelFacts } from "./model_facts.ts";
import { canonicalModel } from "./canonical_model.ts";
import { LearnedSlots, LEARNING } from "./learned_slots.ts";
import { slotFigures, slotLimit } from "./slot_figures.ts";
import { Admission, Entry, type Ticket } from "./server_entry.ts";
import type { SharedLoad } from "./shared_load.ts";
import { type Tenant, TenantCounts } from "./tenants.ts";
import type {
  Health,
  Outcome,
  ProbeResult,
  ServerStatus,
  SlotsSource,
  Unavailable,
} from "./server_status.ts";

export { canonicalModel };
export type { Health, Outcome, ProbeResult, ServerStatus, SlotsSource, Unavailable };

export type { ServerStateOptions, Slots, Ticket };
export { outcomeOf };

export type Listener = (server: string) => void;

export class ServerState {
  /** Requests in flight per key and user, over every server. */
  readonly tenants = new TenantCounts();
  readonly #servers = new Map<string, Entry>();
  readonly #listeners = new Set<Listener>();
  readonly #now: () => number;

  readonly #learnStart: number;
  readonly #shared?: SharedLoad;
  readonly #unwatch?: () => void;

  constructor(readonly options: ServerStateOptions) {
    this.#now = options.now;
    this.#learnStart = new LearnedSlots({ ...LEARNING, ...options.learning }).limit;
    this.#shared = options.shared;
    // A slot freed in another worker is news to this one's wait queue.
    this.#unwatch = options.shared?.watch(() => {
      for (const listener of this.#listeners) listener("");
    });
  }

  /** Stops following the other workers. */
  close(): void {
    this.#unwatch?.();
    this.options.loopLag?.stop();
  }

  /**
   * Claims a slot on the server (the breaker's trial, when half-open); undefined means skip it for now.
   * `reserved`: the request holds a slot `reserve` promised it there (for the same tenant and model), which
   * this turns into the claim.
   */
  begin(server: string, model?: string, reserved = false, tenant?: Tenant): Ticket | undefined {
    const entry = this.#entry(server);
    const unreserved = reserved && entry.reserved > 0;
    if (unreserved) entry.reserved--;
    const pass = entry.health === "down" ? undefined : entry.breaker.admit();
    if (!pass) {
      if (unreserved) this.#shared?.add(server, -1);
      if (reserved && tenant) this.tenants.add(tenant, -1);
      return this.#changed(entry);
    }
    // A promised slot turns into the claim: every worker's count stays as it was.
    if (!unreserved) this.#shared?.add(server, 1);
    entry.inFlight++;
    let warm = false;
    if (model !== undefined) {
      warm = entry.residency.has(model) === true;
      entry.active.set(model, (entry.active.get(model) ?? 0) + 1);
      entry.residency.sent(model);
    }
    // A reserved slot was counted for its tenant when it was promised.
    if (!reserved && tenant) this.tenants.add(tenant, 1);
    this.#changed(entry);
    const shared = this.#shared;
    const level = shared ? shared.load(server) : entry.inFlight;
    const ended = shared ? shared.ended(server) : entry.ended;
    return new Admission(server, entry, this.#now(), pass, model, level, ended, warm, tenant);
  }

  /**
   * Holds a slot for a request about to begin there, so nobody else takes it in between; false when the
   * server already has `slots` in use or promised (by this worker, or by any where workers share the load).
   * The slot counts for `tenant` from now on, so its share is right before the request begins.
   */
  reserve(server: string, slots = Infinity, tenant?: Tenant): boolean {
    if (this.#shared ? !this.#shared.claim(server, slots) : this.load(server) >= slots) return false;
    this.#entry(server).reserved++;
    if (tenant) this.tenants.add(tenant, 1);
    return true;
  }

  /** Gives back a slot held by `reserve` that no request will use. */
  release(server: string, tenant?: Tenant): void {
    const entry = this.#entry(server);
    if (entry.reserved === 0) return;
    entry.reserved--;
    this.#shared?.add(server, -1);
    if (tenant) this.tenants.add(tenant, -1);
    this.#changed(entry);
  }

  /** Slots in use or promised, by every worker. */
  load(server: string): number {
    if (this.#shared) return this.#shared.load(server);
    const entry = this.#servers.get(server);
    return entry ? entry.inFlight + entry.reserved : 0;
  }

  /** Whether `server` holds `model` loaded; undefined where nothing is known. */
  hasLoaded(server: string, model: string): boolean | undefined {
    return this.#servers.get(server)?.residency.has(model);
  }

  /** Whether loading another model there would unload one (also when its memory is unknown). */
  memoryFull(server: string): boolean {
    return this.#servers.get(server)?.residency.full ?? true;
  }

  /** The slots the scheduler counts for a server (`slot_figures.ts`). */
  slots(server: string, declared: number | undefined): Slots {
    return slotFigures(
      server,
      declared,
      this.#servers.get(server),
      this.#shared,
      this.#learnStart,
      this.#now,
    );
  }

  /** The `slots` figure of `slots()` alone: what a check for a free slot needs, without a clock read. */
  limit(server: string, declared: number | undefined): number {
    return slotLimit(server, declared, this.#servers.get(server), this.#shared, this.#learnStart);
  }

  #slotsView(server: string): { slots: number; slotsSource: SlotsSource } {
    const { slots, source } = this.slots(server, this.options.declaredSlots?.(server));
    return { slots, slotsSource: source };
  }

  /**
   * The server has started answering (headers, or a streamed answer's first event): the latency sample is
   * taken here and a half-open trial decides now, not after a long stream.
   */
  answered(ticket: Ticket): void {
    const t = ticket as Admission;
    if (t.done || t.answered) return;
    t.answered = true;
    const now = this.#now();
    t.entry.latency.add(now, now - t.startedAt);
    t.entry.streaming++;
    this.#learn(t, now, t.entry.streaming);
    t.entry.breaker.success(t.pass);
    this.#changed(t.entry);
  }

  /** Ends the request; a second call for the same ticket is ignored, so it is safe in `finally`. */
  finish(ticket: Ticket, outcome: Outcome): void {
    const t = ticket as Admission;
    if (t.done) return;
    t.done = true;
    const { entry, pass } = t;
    const now = this.#now();
    entry.inFlight--;
    if (t.tenant) this.tenants.add(t.tenant, -1);
    if (t.model !== undefined) entry.active.set(t.model, (entry.active.get(t.model) ?? 1) - 1);
    entry.counts.add(now, outcome === "failed");
    if (outcome === "failed") {
      // Also after `answered`: a stream that breaks midway is the server's failure too.
      entry.breaker.failure(pass);
    } else if (!t.answered) {
      if (outcome === "ok") {
        entry.latency.add(now, now - t.startedAt);
        this.#learn(t, now);
        entry.breaker.success(pass);
      } else entry.breaker.release(pass);
    }
    entry.ended++;
    entry.lastEndedAt = now;
    if (this.#shared) {
      this.#shared.end(t.server);
      this.#shared.add(t.server, -1);
    }
    if (t.answered) entry.streaming--;
    this.#changed(entry);
  }

  #learn(t: Admission, now: number, streaming?: number): void {
    const lag = this.options.loopLag;
    const paused = lag && (() => lag.pausedBetween(t.startedAt, now));
    t.entry.learn(t, now, this.#shared, streaming, paused);
  }

  probed(server: string, result: ProbeResult): void {
    const entry = this.#entry(server);
    entry.probed(result, this.#now());
    this.#changed(entry);
  }

  /** Whether a request for `model` may go to `server` now; a server not heard of yet may. Claims nothing. */
  isRoutable(server: string, model: string): boolean {
    return this.unavailable(server, model) === undefined;
  }

  /** Why `server` cannot take a request for `model` now, or undefined when it can. */
  unavailable(server: string, model: string): Unavailable | undefined {
    const entry = this.#servers.get(server);
    if (!entry) return undefined;
    if (entry.health === "down") return "down";
    if (!entry.breaker.wouldAdmit()) return "circuit open";
    if (entry.carried !== undefined && !entry.carried.has(canonicalModel(model))) return "model not found";
    return undefined;
  }

  /** What the server's last successful probe said about `model`, if it listed it. */
  modelFacts(server: string, model: string): ModelFacts | undefined {
    return this.#servers.get(server)?.facts?.get(canonicalModel(model));
  }

  status(): ServerStatus[] {
    const now = this.#now();
    return [...this.#servers.values()]
      .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
      .map((e) => e.status(now, this.#slotsView(e.name)));
  }

  names(): string[] {
    return [...this.#servers.keys()];
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Drops servers that no longer exist (or were disabled): a server added again starts afresh. */
  forget(servers: Iterable<string>): void {
    for (const name of servers) {
      if (this.#servers.delete(name)) this.#notify(name);
    }
  }

  #entry(server: string): Entry {
    let entry = this.#servers.get(server);
    if (!entry) {
      const o = this.options;
      entry = new Entry(
        server,
        new Breaker({ ...o.breaker, now: this.#now, name: server }),
        new LatencyRing(o.latencySamples ?? 256, o.latencyMaxAgeMs ?? 300_000),
        new LearnedSlots({ ...LEARNING, ...o.learning }),
      );
      this.#servers.set(server, entry);
    }
    return entry;
  }

  #changed(entry: Entry): undefined {
    // A request still running on a forgotten server must not resurrect it in anyone's view.
    if (this.#servers.get(entry.name) === entry) this.#notify(entry.name);
  }

  #notify(server: string): void {
    for (const listener of this.#listeners) {
      try {
        listener(server);
      } catch (error) {
        // A broken admin feed must never fail a chat request.
        console.error("gateway: server state listener failed:", error);
      }
    }
  }
}
