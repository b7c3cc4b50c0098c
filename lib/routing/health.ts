/**
 * @module Active health probing: every `intervalMs` each enabled server is asked, concurrently and within
 * `timeoutMs`, whether it is alive and which models it carries, and the answer goes to `ServerState`. It knows
 * the probe endpoints of each backend kind (Ollama: /api/version, /api/tags, /api/ps; OpenAI-compatible:
 * /v1/models), never the chat formats. Probing runs beside the request path and never blocks it.
 *
 * A server whose probe is still running is skipped by the next round, so a hanging server never stacks up
 * probes; and a probe whose fetch ignores its abort still reports a timeout at its deadline. Error texts are a
 * few words naming the endpoint, never the server's address (a fetch error's text carries the full URL).
 * Servers that are removed or disabled are forgotten by the state, so one added back starts afresh.
 *
 * Each server's first result and every change between up and down is logged, with the reason when down: the
 * admin learns which server went away and why without opening the console.
 */
import { concat } from "../runtime/bytes.ts";
import { errorText, log } from "../log/mod.ts";
import type { BackendKind, ServerRecord } from "../store/records.ts";
import type { ProbeResult, ServerState } from "./server_state.ts";
import { type ModelFacts, ollamaModelFacts, openaiModelFacts } from "./model_facts.ts";

export interface HealthOptions {
  fetch: typeof fetch;
  /** The servers as configured now; read at every round, so admin changes apply at the next one. */
  servers: () => readonly ServerRecord[];
  state: ServerState;
  intervalMs?: number;
  timeoutMs?: number;
  /** Also ask Ollama servers which models are loaded (/api/ps); a server without it is not held against. */
  loadedModels?: boolean;
  /** Measures probe durations. */
  now?: () => number;
  /** Logs each server going up or down (the default); the warm-up's own gateway is quiet. */
  logChanges?: boolean;
}

/** A probe failure whose message is already fit to show. */
class ProbeError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
  }
}

/** `root`: the path is beside the API rather than under it (a base URL ending in /v1 loses that part). */
interface GetOptions {
  headers?: Record<string, string>;
  text?: boolean;
  root?: boolean;
}
type Get = (suffix: string, label: string, options?: GetOptions) => Promise<unknown>;
type Probe = (get: Get, server: ServerRecord, loadedModels: boolean) => Promise<ProbeResult>;

const TIMED_OUT = Symbol("timed out");
const STOPPED = Symbol("stopped");

/** The entries of an Ollama model list. */
function ollamaEntries(body: unknown, label: string): unknown[] {
  const models = (body as { models?: unknown })?.models;
  if (!Array.isArray(models)) throw new ProbeError(`${label} answered without a models list`);
  return models;
}

/** The `name` and `model` of each entry of an Ollama model list (they differ on some versions). */
function ollamaNames(body: unknown, label: string): string[] {
  const names = new Set<string>();
  for (const m of ollamaEntries(body, label) as { name?: unknown; model?: unknown }[]) {
    if (typeof m?.name === "string") names.add(m.name);
    if (typeof m?.model === "string") names.add(m.model);
  }
  return [...names];
}

/** What each listed model's entry says, under each of its names. */
function factsByName(entries: unknown[], facts: (entry: unknown) => ModelFacts, names: string[]) {
  const out = new Map<string, ModelFacts>();
  for (const entry of entries) {
    const e = entry as { name?: unknown; model?: unknown; id?: unknown };
    for (const name of [e?.name, e?.model, e?.id]) {
      if (typeof name === "string" && names.includes(name)) out.set(name, facts(entry));
    }
  }
  return out;
}

const PROBES = {
  ollama: async (get, _server, loadedModels) => {
    const version = (await get("/api/version", "/api/version") as { version?: unknown })?.version;
    const tags = await get("/api/tags", "/api/tags");
    const models = ollamaNames(tags, "/api/tags");
    const facts = factsByName(ollamaEntries(tags, "/api/tags"), ollamaModelFacts, models);
    const loaded = loadedModels
      ? await get("/api/ps", "/api/ps").then((b) => ollamaNames(b, "/api/ps"), () => undefined)
      : undefined;
    return { ok: true, version: typeof version === "string" ? version : undefined, models, loaded, facts };
  },
  openai: async (get, server) => {
    const suffix = server.url.replace(/\/+$/, "").endsWith("/v1") ? "/models" : "/v1/models";
    const headers = server.apiKey ? { Authorization: `Bearer ${server.apiKey}` } : undefined;
    let body: unknown;
    try {
      body = await get(suffix, "/v1/models", { headers });
    } catch (error) {
      // Some compatible servers do not list models: alive, but discovery cannot hold them to a list.
      if (error instanceof ProbeError && error.status === 404) return { ok: true };
      throw error;
    }
    const data = (body as { data?: unknown })?.data;
    if (!Array.isArray(data)) throw new ProbeError("/v1/models answered without a data list");
    const models = data.flatMap((m) => typeof m?.id === "string" ? [m.id] : []);
    // vLLM's /metrics (at the root, beside /v1) tells how busy it is; other servers may not have it.
    const figures = await get("/metrics", "/metrics", { headers, text: true, root: true })
      .then((t) => vllmLoad(String(t)), () => undefined);
    // vLLM holds its models loaded for as long as it runs; a server that is not vLLM is not assumed to.
    return {
      ok: true,
      models,
      facts: factsByName(data, openaiModelFacts, models),
      ...(figures && { loaded: models, ...figures }),
    };
  },
} satisfies Record<BackendKind, Probe>;

/** Running and waiting requests from vLLM's Prometheus text, summed over its label sets. */
function vllmLoad(text: string): { running: number; waiting: number } | undefined {
  const sum = (name: string) => {
    let total: number | undefined;
    for (const m of text.matchAll(new RegExp(`^vllm:${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, "gm"))) {
      total = (total ?? 0) + Number(m[1]);
    }
    return total;
  };
  const running = sum("num_requests_running");
  const waiting = sum("num_requests_waiting");
  return running === undefined || waiting === undefined ? undefined : { running, waiting };
}

/** Network errors name the URL; only their kind is kept. */
function describe(error: unknown, timeoutMs: number): string {
  if (error === TIMED_OUT) return `no answer within ${timeoutMs} ms`;
  if (error instanceof ProbeError) return error.message;
  if (typeof error === "symbol") return "probe abandoned";
  const text = `${error} ${(error as Error)?.cause ?? ""}`;
  if (/refused/i.test(text)) return "connection refused";
  if (/dns|lookup|resolve/i.test(text)) return "host name not found";
  if (/reset|closed|broken pipe|eof/i.test(text)) return "connection dropped";
  return "connection failed";
}

interface Running {
  abort: AbortController;
  /** Settles once the result is recorded (or dropped by `stop`). */
  done: Promise<void>;
}

export class HealthProber {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly #running = new Map<string, Running>();
  /** Each server's last logged health: a line is written when it changes, not every round. */
  readonly #logged = new Map<string, boolean>();
  #timer?: ReturnType<typeof setInterval>;

  constructor(readonly options: HealthOptions) {
    this.intervalMs = options.intervalMs ?? 5_000;
    this.timeoutMs = options.timeoutMs ?? 2_000;
  }

  /** Probes at once, then every `intervalMs` until `stop()`. */
  start(): void {
    if (this.#timer !== undefined) return;
    const round = () =>
      this.probeNow().catch((e) => log.error("probe.failed", `health probing failed: ${errorText(e)}`));
    this.#timer = setInterval(round, this.intervalMs);
    Deno.unrefTimer(this.#timer as unknown as number);
    round();
  }

  /** Stops the rounds and abandons running probes; their results are not recorded. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const running = [...this.#running.values()];
    for (const r of running) r.abort.abort(STOPPED);
    await Promise.all(running.map((r) => r.done));
  }

  /** One round; resolves when every enabled server has a result, joining probes already running. */
  async probeNow(): Promise<void> {
    const servers = this.options.servers().filter((s) => s.enabled);
    const names = new Set(servers.map((s) => s.name));
    this.options.state.forget(this.options.state.names().filter((n) => !names.has(n)));
    for (const name of this.#logged.keys()) if (!names.has(name)) this.#logged.delete(name);
    await Promise.all(servers.map((s) => (this.#running.get(s.name) ?? this.#probe(s)).done));
  }

  #probe(server: ServerRecord): Running {
    const { fetch, state, loadedModels = true, now = Date.now } = this.options;
    const abort = new AbortController();
    const base = server.url.replace(/\/+$/, "");
    const get: Get = async (suffix, label, { headers, text, root } = {}) => {
      const url = (root ? base.replace(/\/v1$/, "") : base) + suffix;
      // A redirect is refused, not followed: a registered server must not make the gateway fetch whatever
      // address it names (an internal one) every probe cycle.
      const res = await fetch(url, { headers, signal: abort.signal, redirect: "manual" });
      if (!res.ok) {
        await res.body?.cancel().catch(() => {});
        throw new ProbeError(`${label} answered ${res.status}`, res.status);
      }
      const body = await readAtMost(res, PROBE_BODY_BYTES, label);
      if (text) return new TextDecoder().decode(body);
      try {
        return JSON.parse(new TextDecoder().decode(body));
      } catch {
        throw new ProbeError(`${label} answered with something that is not JSON`);
      }
    };
    const deadline = new Promise<never>((_, reject) => {
      abort.signal.addEventListener("abort", () => reject(abort.signal.reason), { once: true });
    });
    const timer = setTimeout(() => abort.abort(TIMED_OUT), this.timeoutMs);
    const started = now();
    const work = PROBES[server.kind](get, server, loadedModels);
    const done = Promise.race([work, deadline])
      .catch((error): ProbeResult => ({ ok: false, error: describe(error, this.timeoutMs) }))
      .then((result) => {
        clearTimeout(timer);
        if (abort.signal.reason !== STOPPED) {
          state.probed(server.name, { ...result, durationMs: now() - started });
          this.#logChange(server.name, result);
        }
      });
    const running = { abort, done };
    this.#running.set(server.name, running);
    // The guard lasts until the fetch itself lets go, even when the deadline already gave up on it.
    Promise.allSettled([work, done]).then(() => {
      if (this.#running.get(server.name) === running) this.#running.delete(server.name);
    });
    return running;
  }

  #logChange(name: string, result: ProbeResult): void {
    if (this.options.logChanges === false) return;
    const was = this.#logged.get(name);
    if (was === result.ok) return;
    this.#logged.set(name, result.ok);
    if (result.ok) {
      const models = result.models?.length;
      const fields = { server: name, version: result.version, models };
      const back = was === false ? " again" : "";
      log.info("server.up", `${name} is up${back}`, fields);
    } else {
      const reason = result.error ?? "probe failed";
      log.warn("server.down", `${name} is down: ${reason}`, { server: name, reason });
    }
  }
}

/**
 * The most a probe answer may hold. Model lists, running models and metrics pages of real servers are tens of
 * kilobytes; a server answering hundreds of megabytes every cycle would otherwise take the gateway's memory.
 */
export const PROBE_BODY_BYTES = 2 * 1024 * 1024;

async function readAtMost(res: Response, limit: number, label: string): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    // Leaving the loop early cancels the body: nothing more is read.
    if (size > limit) throw new ProbeError(`${label} answered more than ${limit} bytes`);
    chunks.push(chunk);
  }
  return concat(chunks, size);
}
