/**
 * @module What the Deploy profile changes in the configuration: its shorter shutdown grace, and the settings
 * it cannot honour, refused at start.
 */

export type Profile = "deploy" | "self-hosted";

/** Grace of the Deploy profile: the platform sends SIGKILL 5 s after SIGINT, and the last writes need the rest. */
export const DEPLOY_SHUTDOWN_GRACE_MS = 3_000;

/**
 * What the Deploy profile cannot honour is refused at start rather than ignored: a store file (no writable
 * disk) and a metrics port (one port per app).
 */
export function checkDeployable(kv: string | undefined, metricsPort: number | undefined): void {
  if (kv !== undefined && !/^https?:\/\//.test(kv)) {
    throw new Error(
      "Invalid configuration: GATEWAY_KV: the deploy profile's store is Deno.openKv() without a path, or a KV " +
        `Connect URL (https://...), not a file: ${kv}`,
    );
  }
  if (metricsPort !== undefined) {
    throw new Error(
      "Invalid configuration: GATEWAY_METRICS_PORT: the deploy profile serves one port; /metrics is there, " +
        "behind GATEWAY_ADMIN_TOKEN",
    );
  }
}
