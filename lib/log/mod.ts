/**
 * @module The gateway's log: timestamped lines on stderr, one per event, as text (the default) or JSON lines
 * (`GATEWAY_LOG_FORMAT=json`), from `GATEWAY_LOG_LEVEL` up (default `info`). One logger per isolate: the
 * modules that have something to say (start and stop, server health and breakers, configuration reloads,
 * the store, refusal summaries) call it directly rather than being handed it, as they would `console`.
 *
 * Lines are written synchronously, so none is lost when the process exits right after; only the access log's
 * lines (`deferred`), one per request, are gathered and written together at most 100 ms later (or at 64 KB),
 * saving a request the system call, and written first whenever another line is. What a line carries
 * is chosen by its caller, and never a secret: key ids and server names, never keys, tokens or server
 * addresses (`safeLocation` strips what an address may hide).
 */
import { formatLine, type LogFields, type LogFormat, type LogLevel } from "./line.ts";

export type { LogFields, LogFormat, LogLevel };
export { formatLine };

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const satisfies readonly LogLevel[];
export const LOG_FORMATS = ["text", "json"] as const satisfies readonly LogFormat[];

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
/** How long, and up to how many characters, access lines wait to be written together. */
const DEFERRED_MS = 100;
const DEFERRED_BYTES = 64 * 1024;

export interface LogSettings {
  level?: LogLevel;
  format?: LogFormat;
  /** Where finished lines go, without the last newline (deferred ones several at once); default stderr. */
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
  /** Deferred lines not written yet, and their size in characters. */
  #pending: string[] = [];
  #pendingSize = 0;
  #timer?: ReturnType<typeof setTimeout>;

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
    this.flush();
    this.#out(line);
  }

  /** A line that may wait up to 100 ms to be written with others: for one line per request. */
  deferred(level: LogLevel, event: string, message: string, fields?: LogFields): void {
    if (RANK[level] < this.#min) return;
    const line = formatLine({ time: this.#now(), level, event, message, fields }, this.#format);
    this.#pending.push(line);
    this.#pendingSize += line.length + 1;
    if (this.#pendingSize >= DEFERRED_BYTES) this.flush();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), DEFERRED_MS);
      Deno.unrefTimer(this.#timer as unknown as number);
    }
  }

  /** Writes the deferred lines now. */
  flush(): void {
    if (this.#pending.length === 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const lines = this.#pending.join("\n");
    this.#pending = [];
    this.#pendingSize = 0;
    this.#out(lines);
  }

  #out(text: string): void {
    try {
      this.#write(text);
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
