/**
 * @module Gateway configuration: one schema, and the only reader of the environment. Everything else receives
 * a `Config` value, so tests build one without touching the process environment.
 */
import { bodyMemoryFor, defaultBodyMemory } from "./http/body_budget.ts";
import { checkDeployable, DEPLOY_SHUTDOWN_GRACE_MS, type Profile } from "./deploy_profile.ts";
import type { LogFormat, LogLevel } from "./log/mod.ts";
import { ConfigSchema } from "./config_schema.ts";

export { ADMIN_TOKEN_MIN } from "./config_schema.ts";

export interface Config {
  /**
   * `deploy`: the runtime serves (`fetch`), the store is `Deno.openKv()` without a path (or a KV Connect URL),
   * no metrics port, nothing written to disk; `self-hosted`: the rest.
   */
  profile: Profile;
  port: number;
  host: string;
  /**
   * A file path or a KV Connect URL; undefined means the embedded default file, or under the Deploy profile the
   * store `Deno.openKv()` gives without a path.
   */
  kvPath?: string;
  adminToken?: string;
  /** Where /metrics is also served without the token; undefined: only on the main port, behind the token. */
  metricsPort?: number;
  metricsHost: string;
  metricsHostnames: string[];
  trustProxy: string[];
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  bodyMemoryBytes: number;
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  responseTimeoutMs: number;
  idleTimeoutMs: number;
  clientStallTimeoutMs: number;
  maxAnswerBytes: number;
  reloadIntervalMs: number;
  breakerFailures: number;
  breakerOpenMs: number;
  probeIntervalMs: number;
  probeTimeoutMs: number;
  shutdownGraceMs: number;
  keylessRecordsPerMinute: number;
  usageRetentionDays: number;
  usageRetentionEveryMs: number;
  headTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Undefined: the listener's default, lowered on its own if file descriptors run out first. */
  maxConnections?: number;
  maxConnectionsPerAddress: number;
  /** Undefined: one per core. */
  workers?: number;
  /** Origins that may read answers to keys without a domain list; `*` for any. */
  corsOrigins: string[];
  routing: "scheduled" | "weighted";
  /** Undefined: servers without `--slots` or discovered slots are not limited. */
  defaultSlots?: number;
  queueWaitMs: number;
  queueMax: number;
  queuePriorityStepMs: number;
  affinityTtlMs: number;
  shareWindowMs: number;
  /** Output reserved for a request on a token quota that bounds its output nowhere. */
  quotaOutputTokens: number;
  /** Lease of a process's holdings in the store. */
  holdLeaseMs: number;
  /** How long a request waits for a network store before the store counts as down. */
  storeTimeoutMs: number;
  /** What a request whose limits need the store gets while it is down. */
  storeOutage: "closed" | "allow";
  /** Under `allow`: requests per key, minute and process admitted past each limit the store must check. */
  storeOutageRpm: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** A span per chat request through the runtime's OpenTelemetry (OTEL_DENO). */
  traces: boolean;
  /** One log line per finished request. */
  accessLog: boolean;
}

/** Settings whose value is a secret: a start-up error names them without their value. */
const SECRET_SETTING = /TOKEN|SECRET|PASSWORD|_KEY$/;

/** `NAME=value` as a start-up error shows it. */
export function settingText(name: string, value: string | undefined): string {
  if (value === undefined) return `${name} (unset)`;
  return SECRET_SETTING.test(name) ? `${name}=<hidden>` : `${name}=${JSON.stringify(value)}`;
}

export function loadConfig(env: Record<string, string | undefined> = Deno.env.toObject()): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue.path[0]);
    throw new Error(`Invalid configuration: ${settingText(name, env[name])}: ${issue.message}`);
  }
  const e = parsed.data;
  const profile: Profile = e.GATEWAY_PROFILE ?? (e.DENO_DEPLOY ? "deploy" : "self-hosted");
  if (profile === "deploy") checkDeployable(e.GATEWAY_KV, e.GATEWAY_METRICS_PORT);
  const fewest = bodyMemoryFor(e.GATEWAY_MAX_BODY_BYTES);
  if (e.GATEWAY_BODY_MEMORY_BYTES !== undefined && e.GATEWAY_BODY_MEMORY_BYTES < fewest) {
    throw new Error(
      `Invalid configuration: GATEWAY_BODY_MEMORY_BYTES: at least ${fewest} (what one body of ` +
        `GATEWAY_MAX_BODY_BYTES takes in memory), got ${e.GATEWAY_BODY_MEMORY_BYTES}`,
    );
  }
  return {
    profile,
    port: e.PORT,
    host: e.HOST,
    kvPath: e.GATEWAY_KV,
    adminToken: e.GATEWAY_ADMIN_TOKEN,
    metricsPort: e.GATEWAY_METRICS_PORT,
    metricsHost: e.GATEWAY_METRICS_HOST,
    metricsHostnames: e.GATEWAY_METRICS_HOSTNAMES,
    trustProxy: e.GATEWAY_TRUST_PROXY,
    maxBodyBytes: e.GATEWAY_MAX_BODY_BYTES,
    bodyTimeoutMs: e.GATEWAY_BODY_TIMEOUT_MS,
    bodyMemoryBytes: e.GATEWAY_BODY_MEMORY_BYTES ?? defaultBodyMemory(e.GATEWAY_MAX_BODY_BYTES),
    connectTimeoutMs: e.GATEWAY_CONNECT_TIMEOUT_MS,
    firstByteTimeoutMs: e.GATEWAY_FIRST_BYTE_TIMEOUT_MS,
    responseTimeoutMs: e.GATEWAY_RESPONSE_TIMEOUT_MS,
    idleTimeoutMs: e.GATEWAY_IDLE_TIMEOUT_MS,
    clientStallTimeoutMs: e.GATEWAY_CLIENT_STALL_TIMEOUT_MS,
    maxAnswerBytes: e.GATEWAY_MAX_ANSWER_BYTES,
    reloadIntervalMs: e.GATEWAY_RELOAD_INTERVAL_MS,
    breakerFailures: e.GATEWAY_BREAKER_FAILURES,
    breakerOpenMs: e.GATEWAY_BREAKER_OPEN_MS,
    probeIntervalMs: e.GATEWAY_PROBE_INTERVAL_MS,
    probeTimeoutMs: e.GATEWAY_PROBE_TIMEOUT_MS,
    shutdownGraceMs: e.GATEWAY_SHUTDOWN_GRACE_MS ??
      (profile === "deploy" ? DEPLOY_SHUTDOWN_GRACE_MS : 10_000),
    keylessRecordsPerMinute: e.GATEWAY_KEYLESS_RECORDS_PER_MINUTE,
    usageRetentionDays: e.GATEWAY_USAGE_RETENTION_DAYS,
    usageRetentionEveryMs: e.GATEWAY_USAGE_RETENTION_EVERY_MS,
    headTimeoutMs: e.GATEWAY_HEAD_TIMEOUT_MS,
    keepAliveTimeoutMs: e.GATEWAY_KEEPALIVE_TIMEOUT_MS,
    maxConnections: e.GATEWAY_MAX_CONNECTIONS,
    maxConnectionsPerAddress: e.GATEWAY_MAX_CONNECTIONS_PER_ADDRESS,
    workers: e.GATEWAY_WORKERS,
    corsOrigins: e.GATEWAY_CORS_ORIGINS,
    routing: e.GATEWAY_ROUTING,
    defaultSlots: e.GATEWAY_DEFAULT_SLOTS,
    queueWaitMs: e.GATEWAY_QUEUE_WAIT_MS,
    queueMax: e.GATEWAY_QUEUE_MAX,
    queuePriorityStepMs: e.GATEWAY_QUEUE_PRIORITY_STEP_MS,
    affinityTtlMs: e.GATEWAY_AFFINITY_TTL_MS,
    shareWindowMs: e.GATEWAY_SHARE_WINDOW_MS,
    quotaOutputTokens: e.GATEWAY_QUOTA_OUTPUT_TOKENS,
    holdLeaseMs: e.GATEWAY_HOLD_LEASE_MS,
    storeTimeoutMs: e.GATEWAY_STORE_TIMEOUT_MS,
    storeOutage: e.GATEWAY_STORE_OUTAGE,
    storeOutageRpm: e.GATEWAY_STORE_OUTAGE_RPM,
    logLevel: e.GATEWAY_LOG_LEVEL,
    logFormat: e.GATEWAY_LOG_FORMAT,
    traces: e.OTEL_DENO === "true" || e.OTEL_DENO === "1",
    accessLog: e.GATEWAY_ACCESS_LOG === "1" || e.GATEWAY_ACCESS_LOG === "true",
  };
}

/** Defaults for tests and embedding; same values as an empty environment. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), ...overrides };
}
