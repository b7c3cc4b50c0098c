/**
 * @module The environment's schema: every setting the gateway reads, under its name in `Config`, with the
 * variable it comes from, its type, bounds, default and error messages, and what it does. `Config` is computed
 * from this table (config.ts), so a new setting is written here and nowhere else.
 */
import { z } from "zod";
import { parseRange } from "./policy/ip_address.ts";
import { isHostname } from "./http/metrics_host.ts";
import { LOG_FORMATS, LOG_LEVELS } from "./log/mod.ts";

/** The shortest admin token accepted at start. */
export const ADMIN_TOKEN_MIN = 16;

/** One setting: the environment variable it is read from, and its value's schema. */
export interface Setting<Schema extends z.ZodType = z.ZodType> {
  env: string;
  schema: Schema;
}

const from = <Schema extends z.ZodType>(env: string, schema: Schema): Setting<Schema> => ({ env, schema });

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * Every setting, in the order a start-up error looks at them (the first one wrong is the one it names). Under
 * `Config`'s own names; the few whose unset value depends on another are completed by `loadConfig`.
 */
export const SETTINGS = {
  port: from("PORT", z.coerce.number().int().min(0).max(65535).default(8000)),
  host: from("HOST", z.string().min(1).default("0.0.0.0")),
  /**
   * A file path or a KV Connect URL; unset means the embedded default file, or under the Deploy profile the
   * store `Deno.openKv()` gives without a path.
   */
  kvPath: from("GATEWAY_KV", z.string().min(1).optional()),
  /**
   * Opens every admin path; guessing it is slowed per address, but only its length makes guessing hopeless.
   * Padding around it is refused: a bearer header's value is trimmed, so such a token could never match.
   */
  adminToken: from(
    "GATEWAY_ADMIN_TOKEN",
    z.string()
      .min(ADMIN_TOKEN_MIN, `must be at least ${ADMIN_TOKEN_MIN} characters (e.g. openssl rand -hex 32)`)
      .refine((token) => token.trim() === token, "must not begin or end with white space")
      .optional(),
  ),
  /**
   * A second listener serving only /metrics, without the admin token, for a scraper on a private network;
   * unset: /metrics is served only on the main port, behind the token.
   */
  metricsPort: from("GATEWAY_METRICS_PORT", z.coerce.number().int().min(0).max(65535).optional()),
  metricsHost: from("GATEWAY_METRICS_HOST", z.string().min(1).default("127.0.0.1")),
  /** Host names the metrics port answers besides addresses and localhost (comma-separated; DNS rebinding). */
  metricsHostnames: from(
    "GATEWAY_METRICS_HOSTNAMES",
    z.string().optional().transform((text, ctx) => {
      const names = (text ?? "").split(",").map((s) => s.trim()).filter(Boolean);
      const bad = names.find((name) => !isHostname(name));
      if (bad !== undefined) ctx.addIssue({ code: "custom", message: `not a host name: ${bad}` });
      return names;
    }),
  ),
  /** Proxies (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For is believed. */
  trustProxy: from(
    "GATEWAY_TRUST_PROXY",
    z.string().optional().transform((text, ctx) => {
      const entries = (text ?? "").split(",").map((s) => s.trim()).filter(Boolean);
      const bad = entries.find((entry) => !parseRange(entry));
      if (bad !== undefined) {
        ctx.addIssue({ code: "custom", message: `not an IP address or CIDR range: ${bad}` });
      }
      return entries;
    }),
  ),
  /** Largest accepted request body; images make chat bodies large, so the default is generous. */
  maxBodyBytes: from("GATEWAY_MAX_BODY_BYTES", positiveInt(20 * 1024 * 1024)),
  /** Time allowed for a whole request body to arrive; a slow upload would otherwise hold its request open. */
  bodyTimeoutMs: from("GATEWAY_BODY_TIMEOUT_MS", positiveInt(30_000)),
  /**
   * Memory the large request bodies in flight may take together (lib/http/body_budget.ts); a body that does not
   * fit waits briefly, then gets 503. Unset: 256 MiB, or room for two of the largest bodies if that is more.
   */
  bodyMemoryBytes: from("GATEWAY_BODY_MEMORY_BYTES", z.coerce.number().int().positive().optional()),
  /** How long a backend may take to accept a TCP connection (checked when it was not reached recently). */
  connectTimeoutMs: from("GATEWAY_CONNECT_TIMEOUT_MS", positiveInt(3_000)),
  /** How long to wait for a backend's response headers; a cold model can take a while to load. */
  firstByteTimeoutMs: from("GATEWAY_FIRST_BYTE_TIMEOUT_MS", positiveInt(120_000)),
  /** Upper bound on a whole non-streamed backend answer. */
  responseTimeoutMs: from("GATEWAY_RESPONSE_TIMEOUT_MS", positiveInt(600_000)),
  /**
   * Largest backend answer read whole, and largest single event of a streamed one: a misbehaving server must
   * not make the gateway buffer without bound. Chat answers are far smaller; logprobs make them grow most.
   */
  maxAnswerBytes: from("GATEWAY_MAX_ANSWER_BYTES", positiveInt(64 * 1024 * 1024)),
  /** Longest silence allowed between two chunks of a streamed backend answer. */
  idleTimeoutMs: from("GATEWAY_IDLE_TIMEOUT_MS", positiveInt(60_000)),
  /**
   * Longest a streamed answer waits for its client to take more bytes while the answer has more; then the
   * stream ends (partial), freeing its server slot and cancelling the backend call. A client that reads
   * nothing for this long has several MB of its answer unread in socket buffers: it is not reading. Long
   * enough for a client paused in a debugger or a mobile link's retransmission stalls; no longer than a
   * queued request waits for a slot (`GATEWAY_QUEUE_WAIT_MS`), so a stalled reader holds a slot no longer
   * than a waiter would wait for it.
   */
  clientStallTimeoutMs: from("GATEWAY_CLIENT_STALL_TIMEOUT_MS", positiveInt(30_000)),
  /** Consecutive failures that open a server's circuit breaker. */
  breakerFailures: from("GATEWAY_BREAKER_FAILURES", positiveInt(5)),
  /** How long an open breaker keeps a server out before one trial request. */
  breakerOpenMs: from("GATEWAY_BREAKER_OPEN_MS", positiveInt(30_000)),
  /** How often every server is health-checked, and how long one check may take. */
  probeIntervalMs: from("GATEWAY_PROBE_INTERVAL_MS", positiveInt(5_000)),
  probeTimeoutMs: from("GATEWAY_PROBE_TIMEOUT_MS", positiveInt(2_000)),
  /** How often a running gateway looks for admin changes in the store. */
  reloadIntervalMs: from("GATEWAY_RELOAD_INTERVAL_MS", positiveInt(250)),
  /**
   * Usage rows kept per minute for refusals without a valid key; anyone can send those, so the rest are only
   * counted (metrics, a log line a minute). 0 keeps none.
   */
  keylessRecordsPerMinute: from(
    "GATEWAY_KEYLESS_RECORDS_PER_MINUTE",
    z.coerce.number().int().min(0).default(10),
  ),
  /**
   * Usage rows older than this many days are rolled up into one record per day and group (key, user, model,
   * server, format, outcome) and deleted, in the background; 0 keeps every row.
   */
  usageRetentionDays: from("GATEWAY_USAGE_RETENTION_DAYS", z.coerce.number().int().min(0).default(90)),
  /** Between two retention passes, ms (the first comes a tenth of it after start, at most a minute). */
  usageRetentionEveryMs: from(
    "GATEWAY_USAGE_RETENTION_EVERY_MS",
    z.coerce.number().int().min(1_000).default(3_600_000),
  ),
  /**
   * How long a stopping gateway lets running requests and streams finish before it ends them. Unset: 10 s, or
   * 3 s under the Deploy profile, whose platform kills a process 5 s after its SIGINT.
   */
  shutdownGraceMs: from("GATEWAY_SHUTDOWN_GRACE_MS", z.coerce.number().int().positive().optional()),
  /**
   * Time a client has to send each complete request head, from connecting or from its previous answer; a slow
   * trickle is cut off, and so is a client's kept-alive connection left idle that long.
   */
  headTimeoutMs: from("GATEWAY_HEAD_TIMEOUT_MS", positiveInt(10_000)),
  /**
   * How long a trusted proxy's connection may stay open with no request in progress. Longer than the 60 s idle
   * timeout of common load balancers, so that they, not the gateway, close a shared connection first.
   */
  keepAliveTimeoutMs: from("GATEWAY_KEEPALIVE_TIMEOUT_MS", positiveInt(65_000)),
  /** Worker isolates of `deno task start:parallel`; unset: one per core. */
  workers: from("GATEWAY_WORKERS", z.coerce.number().int().positive().optional()),
  /** Open client connections at most; unset: 4096, lowered on its own if file descriptors run out first. */
  maxConnections: from("GATEWAY_MAX_CONNECTIONS", z.coerce.number().int().positive().optional()),
  /**
   * Open client connections at most from one address (0: no such limit); trusted proxies (GATEWAY_TRUST_PROXY)
   * have none. One client's idle connections would otherwise take every place.
   */
  maxConnectionsPerAddress: from(
    "GATEWAY_MAX_CONNECTIONS_PER_ADDRESS",
    z.coerce.number().int().min(0).default(512),
  ),
  /**
   * Web origins (`https://app.example.com`, comma-separated, or `*`) that may read answers to keys without a
   * domain list, and refusals without a valid key. A key with a domain list answers only its own sites.
   */
  corsOrigins: from(
    "GATEWAY_CORS_ORIGINS",
    z.string().optional().transform((text, ctx) => {
      const entries = (text ?? "").split(",").map((s) => s.trim()).filter(Boolean);
      return entries.map((entry) => {
        if (entry === "*" || entry === "null") return entry;
        const origin = URL.canParse(entry) ? new URL(entry).origin : "null";
        if (origin === "null" || origin !== entry.replace(/\/$/, "").toLowerCase()) {
          ctx.addIssue({ code: "custom", message: `not a web origin (scheme://host[:port]): ${entry}` });
        }
        return origin;
      });
    }),
  ),
  /**
   * Where the gateway starts learning the slots of a server without `--slots` or discovered ones; unset, 1,
   * Ollama's own default for OLLAMA_NUM_PARALLEL. Learning then raises or lowers it from what the server does.
   */
  defaultSlots: from("GATEWAY_DEFAULT_SLOTS", z.coerce.number().int().positive().optional()),
  /** Longest wait for a free server slot, and most requests waiting per model; beyond, 503 / 429. */
  queueWaitMs: from("GATEWAY_QUEUE_WAIT_MS", positiveInt(30_000)),
  queueMax: from("GATEWAY_QUEUE_MAX", positiveInt(100)),
  /** How much earlier than a normal-priority request a high one counts as having arrived (low: as much later). */
  queuePriorityStepMs: from("GATEWAY_QUEUE_PRIORITY_STEP_MS", positiveInt(5_000)),
  /** How long a conversation keeps going to the server that served its last turn. */
  affinityTtlMs: from("GATEWAY_AFFINITY_TTL_MS", positiveInt(600_000)),
  /**
   * How long a tenant (key, or its user) that sent a request keeps its fair share of the model's slots free
   * for itself while others contend; 0 lets a burst take every free slot.
   */
  shareWindowMs: from("GATEWAY_SHARE_WINDOW_MS", z.coerce.number().int().nonnegative().default(15_000)),
  /**
   * Output reserved against a token quota for a request that names no `max_tokens` on a key without
   * `--max-predict`; the request is then asked for at most that many tokens.
   */
  quotaOutputTokens: from("GATEWAY_QUOTA_OUTPUT_TOKENS", positiveInt(4096)),
  /**
   * How long what a gateway process holds against quotas and concurrency limits outlives the process if it
   * dies; a living process renews it every third of that.
   */
  holdLeaseMs: from("GATEWAY_HOLD_LEASE_MS", positiveInt(30_000)),
  /**
   * How long a request waits for a network store (KV Connect, Deno Deploy) before the store counts as down:
   * Deno's client would wait for it forever. Not used for a local store file.
   */
  storeTimeoutMs: from("GATEWAY_STORE_TIMEOUT_MS", positiveInt(1_000)),
  /**
   * What a request whose limits need the store gets while the store is down: `closed` a 503
   * `store_unavailable`; `allow` admission past each such limit, at most GATEWAY_STORE_OUTAGE_RPM requests
   * per key, minute and gateway process. Keys without limits are served from memory either way.
   */
  storeOutage: from("GATEWAY_STORE_OUTAGE", z.enum(["closed", "allow"]).default("closed")),
  storeOutageRpm: from("GATEWAY_STORE_OUTAGE_RPM", positiveInt(60)),
  /**
   * `deploy`: only what Deno Deploy offers (lib/gateway.ts): the runtime serves (`fetch`), the store is
   * `Deno.openKv()` without a path (or a KV Connect URL), no metrics port, nothing written to disk;
   * `self-hosted`: the gateway's own listener, a store file, the metrics port. Unset: `deploy` where Deno
   * Deploy says the code runs there (`DENO_DEPLOY`).
   */
  profile: from("GATEWAY_PROFILE", z.enum(["deploy", "self-hosted"]).optional()),
  /** Set by Deno Deploy in every context; users cannot set `DENO_` variables there. Read for `profile` only. */
  denoDeploy: from("DENO_DEPLOY", z.string().optional()),
  /** The least severe log lines written to stderr (lib/log/): `debug`, `info`, `warn` or `error`. */
  logLevel: from("GATEWAY_LOG_LEVEL", z.enum(LOG_LEVELS).default("info")),
  /** `text` lines for a person, or `json`: one JSON object per line, for a log shipper. */
  logFormat: from("GATEWAY_LOG_FORMAT", z.enum(LOG_FORMATS).default("text")),
  /**
   * The runtime's own OpenTelemetry switch: with it on, the gateway also sends a span per chat request (the
   * GenAI conventions' `chat {model}`) through the runtime's exporter (OTEL_EXPORTER_OTLP_*).
   */
  traces: from("OTEL_DENO", z.string().optional().transform((on) => on === "true" || on === "1")),
  /**
   * `1`: one line per finished request (time, key id, model, server, format, status, tokens, latency), at
   * `info`. Off by default: a busy gateway would write thousands a second.
   */
  accessLog: from(
    "GATEWAY_ACCESS_LOG",
    z.enum(["0", "1", "false", "true"]).default("0").transform((on) => on === "1" || on === "true"),
  ),
  /**
   * `1`: before taking its first request, the gateway serves a few hundred chats to a private copy of itself
   * (lib/warm_up/), so its first clients are served by optimized code; `0` starts it without (some 0.8 s
   * sooner). Never under the Deploy profile, where the platform starts isolates on demand.
   */
  warmUp: from(
    "GATEWAY_WARM_UP",
    z.enum(["0", "1", "false", "true"]).default("1").transform((on) => on === "1" || on === "true"),
  ),
} satisfies Record<string, Setting>;

/** Each setting's value as its schema gives it, under its name in `Config`. */
export type SettingValues = { [Name in keyof typeof SETTINGS]: z.output<(typeof SETTINGS)[Name]["schema"]> };
