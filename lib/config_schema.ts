/**
 * @module The environment's schema: every setting the gateway reads, its type, bounds and default, each with
 * what it does. `config.ts` reads the environment through it.
 */
import { z } from "zod";
import { parseRange } from "./policy/ip_address.ts";
import { isHostname } from "./http/metrics_host.ts";
import { LOG_FORMATS, LOG_LEVELS } from "./log/mod.ts";

/** The shortest admin token accepted at start. */
export const ADMIN_TOKEN_MIN = 16;

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const ConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOST: z.string().min(1).default("0.0.0.0"),
  GATEWAY_KV: z.string().min(1).optional(),
  /**
   * Opens every admin path; guessing it is slowed per address, but only its length makes guessing hopeless.
   * Padding around it is refused: a bearer header's value is trimmed, so such a token could never match.
   */
  GATEWAY_ADMIN_TOKEN: z.string()
    .min(ADMIN_TOKEN_MIN, `must be at least ${ADMIN_TOKEN_MIN} characters (e.g. openssl rand -hex 32)`)
    .refine((token) => token.trim() === token, "must not begin or end with white space")
    .optional(),
  /** A second listener serving only /metrics, without the admin token, for a scraper on a private network. */
  GATEWAY_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  GATEWAY_METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  /** Host names the metrics port answers besides addresses and localhost (comma-separated; DNS rebinding). */
  GATEWAY_METRICS_HOSTNAMES: z.string().optional().transform((text, ctx) => {
    const names = (text ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    const bad = names.find((name) => !isHostname(name));
    if (bad !== undefined) ctx.addIssue({ code: "custom", message: `not a host name: ${bad}` });
    return names;
  }),
  /** Proxies (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For is believed. */
  GATEWAY_TRUST_PROXY: z.string().optional().transform((text, ctx) => {
    const entries = (text ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    const bad = entries.find((entry) => !parseRange(entry));
    if (bad !== undefined) {
      ctx.addIssue({ code: "custom", message: `not an IP address or CIDR range: ${bad}` });
    }
    return entries;
  }),
  /** Largest accepted request body; images make chat bodies large, so the default is generous. */
  GATEWAY_MAX_BODY_BYTES: positiveInt(20 * 1024 * 1024),
  /** Time allowed for a whole request body to arrive; a slow upload would otherwise hold its request open. */
  GATEWAY_BODY_TIMEOUT_MS: positiveInt(30_000),
  /**
   * Memory the large request bodies in flight may take together (lib/http/body_budget.ts); a body that does not
   * fit waits briefly, then gets 503. Unset: 256 MiB, or room for two of the largest bodies if that is more.
   */
  GATEWAY_BODY_MEMORY_BYTES: z.coerce.number().int().positive().optional(),
  /** How long a backend may take to accept a TCP connection (checked when it was not reached recently). */
  GATEWAY_CONNECT_TIMEOUT_MS: positiveInt(3_000),
  /** How long to wait for a backend's response headers; a cold model can take a while to load. */
  GATEWAY_FIRST_BYTE_TIMEOUT_MS: positiveInt(120_000),
  /** Upper bound on a whole non-streamed backend answer. */
  GATEWAY_RESPONSE_TIMEOUT_MS: positiveInt(600_000),
  /**
   * Largest backend answer read whole, and largest single event of a streamed one: a misbehaving server must
   * not make the gateway buffer without bound. Chat answers are far smaller; logprobs make them grow most.
   */
  GATEWAY_MAX_ANSWER_BYTES: positiveInt(64 * 1024 * 1024),
  /** Longest silence allowed between two chunks of a streamed backend answer. */
  GATEWAY_IDLE_TIMEOUT_MS: positiveInt(60_000),
  /**
   * Longest a streamed answer waits for its client to take more bytes while the answer has more; then the
   * stream ends (partial), freeing its server slot and cancelling the backend call. A client that reads
   * nothing for this long has several MB of its answer unread in socket buffers: it is not reading. Long
   * enough for a client paused in a debugger or a mobile link's retransmission stalls; no longer than a
   * queued request waits for a slot (`GATEWAY_QUEUE_WAIT_MS`), so a stalled reader holds a slot no longer
   * than a waiter would wait for it.
   */
  GATEWAY_CLIENT_STALL_TIMEOUT_MS: positiveInt(30_000),
  /** Consecutive failures that open a server's circuit breaker. */
  GATEWAY_BREAKER_FAILURES: positiveInt(5),
  /** How long an open breaker keeps a server out before one trial request. */
  GATEWAY_BREAKER_OPEN_MS: positiveInt(30_000),
  /** How often every server is health-checked, and how long one check may take. */
  GATEWAY_PROBE_INTERVAL_MS: positiveInt(5_000),
  GATEWAY_PROBE_TIMEOUT_MS: positiveInt(2_000),
  /** How often a running gateway looks for admin changes in the store. */
  GATEWAY_RELOAD_INTERVAL_MS: positiveInt(250),
  /**
   * Usage rows kept per minute for refusals without a valid key; anyone can send those, so the rest are only
   * counted (metrics, a log line a minute). 0 keeps none.
   */
  GATEWAY_KEYLESS_RECORDS_PER_MINUTE: z.coerce.number().int().min(0).default(10),
  /**
   * Usage rows older than this many days are rolled up into one record per day and group (key, user, model,
   * server, format, outcome) and deleted, in the background; 0 keeps every row.
   */
  GATEWAY_USAGE_RETENTION_DAYS: z.coerce.number().int().min(0).default(90),
  /** Between two retention passes, ms (the first comes a tenth of it after start, at most a minute). */
  GATEWAY_USAGE_RETENTION_EVERY_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  /**
   * How long a stopping gateway lets running requests and streams finish before it ends them. Unset: 10 s, or
   * 3 s under the Deploy profile, whose platform kills a process 5 s after its SIGINT.
   */
  GATEWAY_SHUTDOWN_GRACE_MS: z.coerce.number().int().positive().optional(),
  /** Time a new connection has to send its first complete request head; a slow trickle is cut off. */
  GATEWAY_HEAD_TIMEOUT_MS: positiveInt(10_000),
  /**
   * How long a connection may stay open with no request in progress. Longer than the 60 s idle timeout of
   * common load balancers, so that they, not the gateway, close a shared connection first.
   */
  GATEWAY_KEEPALIVE_TIMEOUT_MS: positiveInt(65_000),
  /** Worker isolates of `deno task start:parallel`; unset: one per core. */
  GATEWAY_WORKERS: z.coerce.number().int().positive().optional(),
  /** Open client connections at most; unset: 4096, lowered on its own if file descriptors run out first. */
  GATEWAY_MAX_CONNECTIONS: z.coerce.number().int().positive().optional(),
  /**
   * Open client connections at most from one address (0: no such limit); trusted proxies (GATEWAY_TRUST_PROXY)
   * have none. One client's idle connections would otherwise take every place.
   */
  GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).default(512),
  /**
   * Web origins (`https://app.example.com`, comma-separated, or `*`) that may read answers to keys without a
   * domain list, and refusals without a valid key. A key with a domain list answers only its own sites.
   */
  GATEWAY_CORS_ORIGINS: z.string().optional().transform((text, ctx) => {
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
  /** `scheduled` (loaded models, slots, wait queue, affinity) or `weighted` (the plain weighted draw). */
  GATEWAY_ROUTING: z.enum(["scheduled", "weighted"]).default("scheduled"),
  /**
   * Where the gateway starts learning the slots of a server without `--slots` or discovered ones: 1, Ollama's
   * own default for OLLAMA_NUM_PARALLEL; learning then raises or lowers it from what the server does.
   */
  GATEWAY_DEFAULT_SLOTS: z.coerce.number().int().positive().optional(),
  /** Longest wait for a free server slot, and most requests waiting per model; beyond, 503 / 429. */
  GATEWAY_QUEUE_WAIT_MS: positiveInt(30_000),
  GATEWAY_QUEUE_MAX: positiveInt(100),
  /** How much earlier than a normal-priority request a high one counts as having arrived (low: as much later). */
  GATEWAY_QUEUE_PRIORITY_STEP_MS: positiveInt(5_000),
  /** How long a conversation keeps going to the server that served its last turn. */
  GATEWAY_AFFINITY_TTL_MS: positiveInt(600_000),
  /**
   * How long a tenant (key, or its user) that sent a request keeps its fair share of the model's slots free
   * for itself while others contend; 0 lets a burst take every free slot.
   */
  GATEWAY_SHARE_WINDOW_MS: z.coerce.number().int().nonnegative().default(15_000),
  /**
   * Output reserved against a token quota for a request that names no `max_tokens` on a key without
   * `--max-predict`; the request is then asked for at most that many tokens.
   */
  GATEWAY_QUOTA_OUTPUT_TOKENS: positiveInt(4096),
  /**
   * How long what a gateway process holds against quotas and concurrency limits outlives the process if it
   * dies; a living process renews it every third of that.
   */
  GATEWAY_HOLD_LEASE_MS: positiveInt(30_000),
  /**
   * How long a request waits for a network store (KV Connect, Deno Deploy) before the store counts as down:
   * Deno's client would wait for it forever. Not used for a local store file.
   */
  GATEWAY_STORE_TIMEOUT_MS: positiveInt(1_000),
  /**
   * What a request whose limits need the store gets while the store is down: `closed` a 503
   * `store_unavailable`; `allow` admission past each such limit, at most GATEWAY_STORE_OUTAGE_RPM requests
   * per key, minute and gateway process. Keys without limits are served from memory either way.
   */
  GATEWAY_STORE_OUTAGE: z.enum(["closed", "allow"]).default("closed"),
  GATEWAY_STORE_OUTAGE_RPM: positiveInt(60),
  /**
   * `deploy`: only what Deno Deploy offers (lib/gateway.ts); `self-hosted`: the gateway's own listener, a store
   * file, the metrics port. Unset: `deploy` where Deno Deploy says the code runs there (`DENO_DEPLOY`).
   */
  GATEWAY_PROFILE: z.enum(["deploy", "self-hosted"]).optional(),
  /** Set by Deno Deploy in every context; users cannot set `DENO_` variables there. */
  DENO_DEPLOY: z.string().optional(),
  /** The least severe log lines written to stderr (lib/log/): `debug`, `info`, `warn` or `error`. */
  GATEWAY_LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  /** `text` lines for a person, or `json`: one JSON object per line, for a log shipper. */
  GATEWAY_LOG_FORMAT: z.enum(LOG_FORMATS).default("text"),
  /**
   * The runtime's own OpenTelemetry switch: with it on, the gateway also sends a span per chat request (the
   * GenAI conventions' `chat {model}`) through the runtime's exporter (OTEL_EXPORTER_OTLP_*).
   */
  OTEL_DENO: z.string().optional(),
  /**
   * `1`: one line per finished request (time, key id, model, server, format, status, tokens, latency), at
   * `info`. Off by default: a busy gateway would write thousands a second.
   */
  GATEWAY_ACCESS_LOG: z.enum(["0", "1", "false", "true"]).default("0"),
});
