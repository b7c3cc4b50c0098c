/**
 * @module One log line, as text or as a JSON object. Text is for a person at a terminal: the time, the level,
 * the event, a sentence, then the fields as `name=value` (quoted where they hold spaces or quotes), so that
 * `grep server=gpu1` finds every line about that server. JSON lines are for a log shipper: the same time,
 * level, event and sentence, and every field as a member.
 */

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "text" | "json";

/** What a line may carry beside its sentence; undefined members are left out. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface LogEntry {
  /** Milliseconds since the epoch. */
  time: number;
  level: LogLevel;
  /** A dotted name a filter can match (`server.down`, `config.changed`). */
  event: string;
  message: string;
  fields?: LogFields;
}

const TEXT_LEVEL: Record<LogLevel, string> = { debug: "DEBUG", info: "INFO ", warn: "WARN ", error: "ERROR" };

/** A value as it stands after `name=` in a text line: bare when it has nothing a reader could misread. */
function textValue(value: string | number | boolean | null): string {
  if (typeof value !== "string") return String(value);
  return value !== "" && /^[^\s"=\\]+$/.test(value) ? value : JSON.stringify(value);
}

/** The line's characters, without the newline. A line break inside a value is escaped: one event, one line. */
export function formatLine(entry: LogEntry, format: LogFormat): string {
  const time = new Date(entry.time).toISOString();
  if (format === "json") {
    const out: Record<string, unknown> = {
      time,
      level: entry.level,
      event: entry.event,
      msg: entry.message,
    };
    for (const [name, value] of Object.entries(entry.fields ?? {})) {
      if (value !== undefined && !(name in out)) out[name] = value;
    }
    return JSON.stringify(out);
  }
  let line = `${time} ${TEXT_LEVEL[entry.level]} ${entry.event}: ${entry.message.replace(/[\r\n]+/g, " ")}`;
  for (const [name, value] of Object.entries(entry.fields ?? {})) {
    if (value !== undefined) line += ` ${name}=${textValue(value)}`;
  }
  return line;
}
