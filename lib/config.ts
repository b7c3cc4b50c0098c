/**
 * @module Gateway configuration: one schema, and the only reader of the environment. Everything else receives
 * a `Config` value, so tests build one without touching the process environment.
 */
import { bodyMemoryFor, defaultBodyMemory } from "./http/body_budget.ts";
import { checkDeployable, DEPLOY_SHUTDOWN_GRACE_MS, type Profile } from "./deploy_profile.ts";
import { type Setting, SETTINGS, type SettingValues } from "./config_schema.ts";

export { ADMIN_TOKEN_MIN } from "./config_schema.ts";

/** The settings whose unset value depends on another setting: `loadConfig` completes them. */
interface Completed {
  /** The Deploy profile where the platform says so (`DENO_DEPLOY`), unless `GATEWAY_PROFILE` says otherwise. */
  profile: Profile;
  /** 256 MiB, or room for two of the largest bodies if that is more. */
  bodyMemoryBytes: number;
  /** 10 s, or 3 s under the Deploy profile. */
  shutdownGraceMs: number;
}

/** Every setting, as `SETTINGS` in config_schema.ts declares it, with those of `Completed` filled in. */
export type Config = Omit<SettingValues, keyof Completed | "denoDeploy"> & Completed;

/** Settings whose value is a secret: a start-up error names them without their value. */
const SECRET_SETTING = /TOKEN|SECRET|PASSWORD|_KEY$/;

/** `NAME=value` as a start-up error shows it. */
export function settingText(name: string, value: string | undefined): string {
  if (value === undefined) return `${name} (unset)`;
  return SECRET_SETTING.test(name) ? `${name}=<hidden>` : `${name}=${JSON.stringify(value)}`;
}

/** Each setting's value under its name in `Config`; a wrong one throws, naming its variable and value. */
function readSettings(env: Record<string, string | undefined>): SettingValues {
  const values: Record<string, unknown> = {};
  for (const [name, { env: variable, schema }] of Object.entries(SETTINGS) as [string, Setting][]) {
    const parsed = schema.safeParse(env[variable]);
    if (!parsed.success) {
      const message = parsed.error.issues[0].message;
      throw new Error(`Invalid configuration: ${settingText(variable, env[variable])}: ${message}`);
    }
    values[name] = parsed.data;
  }
  return values as SettingValues;
}

export function loadConfig(env: Record<string, string | undefined> = Deno.env.toObject()): Config {
  const { denoDeploy, ...settings } = readSettings(env);
  const profile: Profile = settings.profile ?? (denoDeploy ? "deploy" : "self-hosted");
  if (profile === "deploy") checkDeployable(settings.kvPath, settings.metricsPort);
  const fewest = bodyMemoryFor(settings.maxBodyBytes);
  if (settings.bodyMemoryBytes !== undefined && settings.bodyMemoryBytes < fewest) {
    throw new Error(
      `Invalid configuration: GATEWAY_BODY_MEMORY_BYTES: at least ${fewest} (what one body of ` +
        `GATEWAY_MAX_BODY_BYTES takes in memory), got ${settings.bodyMemoryBytes}`,
    );
  }
  return {
    ...settings,
    profile,
    bodyMemoryBytes: settings.bodyMemoryBytes ?? defaultBodyMemory(settings.maxBodyBytes),
    shutdownGraceMs: settings.shutdownGraceMs ?? (profile === "deploy" ? DEPLOY_SHUTDOWN_GRACE_MS : 10_000),
  };
}

/** Defaults for tests and embedding; same values as an empty environment. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), ...overrides };
}
