/**
 * @module A gateway that cannot start says why in one line, naming the setting and the value that stopped
 * it, and exits 1: no stack trace for a mistake in the environment. The line goes through the log, in the
 * configured format as far as the environment says it (a broken `GATEWAY_LOG_FORMAT` falls back to text).
 */
import { settingText } from "../config.ts";
import { DEFAULT_KV_PATH, StoreFolderMissing } from "../store/kv.ts";
import { errorText, log, LOG_FORMATS, type LogFormat } from "../log/mod.ts";

/** What the gateway was doing when it failed. */
export type StartStep = "configuration" | "store" | "listen" | "metrics";

/** The settings behind each step, as the error line names them. */
const SETTINGS: Record<Exclude<StartStep, "configuration">, string[]> = {
  store: ["GATEWAY_KV"],
  listen: ["HOST", "PORT"],
  metrics: ["GATEWAY_METRICS_HOST", "GATEWAY_METRICS_PORT"],
};

/** A listen error in a few words, the kind first: an address in use names the port above all. */
function listenReason(error: unknown): string {
  if (error instanceof Deno.errors.AddrInUse) return "the address is already in use";
  if (error instanceof Deno.errors.AddrNotAvailable) return "no such address on this machine";
  if (error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.NotCapable) {
    return `not allowed: ${errorText(error)}`;
  }
  return errorText(error);
}

/** The one line for a failure at `step`, without time or level. */
export function startupMessage(
  step: StartStep,
  error: unknown,
  env: Record<string, string | undefined>,
): string {
  if (step === "configuration") return `cannot start: ${errorText(error)}`;
  const settings = SETTINGS[step].map((name) =>
    name === "GATEWAY_KV" && env[name] === undefined
      ? `GATEWAY_KV (unset: ${DEFAULT_KV_PATH})`
      : settingText(name, env[name])
  ).join(" ");
  if (step === "store") {
    const what = error instanceof StoreFolderMissing
      ? errorText(error)
      : `cannot open the store: ${errorText(error)}`;
    return `cannot start: ${settings}: ${what}`;
  }
  return `cannot start: cannot listen (${settings}): ${listenReason(error)}`;
}

/** Writes the line and ends the process with status 1. */
export function failStartup(step: StartStep, error: unknown, env = Deno.env.toObject()): never {
  const format = env.GATEWAY_LOG_FORMAT as LogFormat;
  log.configure({ format: LOG_FORMATS.includes(format) ? format : "text" });
  log.error("gateway.start_failed", startupMessage(step, error, env), { step });
  Deno.exit(1);
}
