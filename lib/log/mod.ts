/**
 * @module The gateway's log: timestamped lines on stderr, one per event, as text (the default) or JSON lines
 * (`GATEWAY_LOG_FORMAT=json`), from `GATEWAY_LOG_LEVEL` up (default `info`). One logger per isolate: the
 * modules that have something to say (start and stop, server health and breakers, configuration reloads,
 * the store, refusal summaries) call it directly rather than being handed it, as they would `console`.
 *
 * Lines are written synchronously, so none is lost when the process exits right after. What a line carries
 * is chosen by its caller, and never a secret: key ids and server names, never keys, tokens or server
 * addresses (`safeLocation` strips what an address may hide).
 */
import { formatLine, type LogFields, type LogFormat, type LogLevel } from "./line.ts";

export type { LogFields, LogFormat, LogLevel };
export { formatLine };

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const satisfies readonly LogLevel[];
export const LOG_FORMATS = ["text", "json"] as const satisfies readonly LogFormat[];

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface LogSettings {
  level?: LogLevel;
  format?: LogFormat;
  /** Where a finished line goes, without its newline; default stderr. */
  write?: (line: string) => void;
  now?: () => number;
}

const encoder = new TextEncoder();

function writeStderr(line: string): void {
  const bytes = encoder.encode(line + "\n");
  // A pipe may take a long line in parts.
  for (let at = 0; at < bytes.length;) at += Deno.stderr.writeSync(bytes.subarray(at));
}

export class Logger {
  #min = RANK.info;
  #format: LogFormat = "text";
  #write: (line: string) => void = writeStderr;
  #now: () => number = Date.now;

  /** Changes what is given; the rest stays. */
  configure(settings: LogSettings): void {
    if (settings.level) this.#min = RANK[settings.level];
    if (settings.format) this.#format = settings.format;
    if (settings.write) this.#write = settings.write;
    if (settings.now) this.#now = settings.now;
  }

  get format(): LogFormat {
    return this.#format;
  }

  /** Whether a line of `level` would be written: callers skip building what would be thrown away. */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.#min;
  }

  debug(event: string, message: string, fields?: LogFields): void {
    this.write("debug", event, message, fields);
  }

  info(event: string, message: string, fields?: LogFields): void {
    this.write("info", event, message, fields);
  }

  warn(event: string, message: string, fields?: LogFields): void {
    this.write("warn", event, message, fields);
  }

  error(event: string, message: string, fields?: LogFields): void {
    this.write("error", event, message, fields);
  }

  write(level: LogLevel, event: string, message: string, fields?: LogFields): void {
    if (RANK[level] < this.#min) return;
    const line = formatLine({ time: this.#now(), level, event, message, fields }, this.#format);
    try {
      this.#write(line);
    } catch {
      // A closed stderr must not fail what was being logged.
    }
  }
}

/** The isolate's logger. */
export const log = new Logger();

/**
 * A store location fit for a log line: a URL without its user, password, query or fragment (where a token
 * could hide), a path as given; `undefined` is the default file or, under the Deploy profile, the platform's.
 */
export function safeLocation(location: string | undefined, fallback: string): string {
  if (location === undefined) return fallback;
  if (!/^https?:\/\//i.test(location) || !URL.canParse(location)) return location;
  const url = new URL(location);
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** An error's message, for a line: a few words, not its stack. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
