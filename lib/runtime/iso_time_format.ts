/**
 * @module Instants as ISO-8601 text, exactly as `Date.prototype.toISOString` writes them, made cheaply on the
 * request path: answers (format B's `created_at`, on every streamed chunk too) and usage records each need
 * one, and the runtime's conversion costs some 5 µs when it runs once between other work, as it does at one
 * connection. The runtime still writes the date, once per UTC day; the time of day is arithmetic. The last
 * instant written is kept with its text: the lines of a stream rendered together, and requests answered within
 * one millisecond, share it, and a record's time read back (`isoTimeMs`) is known without parsing it.
 */
const DAY_MS = 86_400_000;

/** The UTC day the cached date belongs to (its first millisecond), and that date as written, up to the `T`. */
let dayStart = NaN;
let datePart = "";

const two = (n: number) => (n < 10 ? "0" : "") + n;
const three = (n: number) => (n < 10 ? "00" : n < 100 ? "0" : "") + n;

/** The second the cached second's text belongs to (its first millisecond), and that text up to the `.`. */
let secondStart = NaN;
let secondPart = "";

/** The last instant written, and its text. */
let lastMs = NaN;
let lastText = "";

/** `new Date(ms).toISOString()`, throwing the same RangeError for an instant a Date cannot hold. */
export function isoTime(ms: number): string {
  const time = Math.trunc(ms);
  if (time === lastMs) return lastText;
  const text = write(time);
  lastMs = time;
  lastText = text;
  return text;
}

/** `Date.parse(text)`; without parsing for the text `isoTime` wrote last. */
export function isoTimeMs(text: string): number {
  return text === lastText ? lastMs : Date.parse(text);
}

function write(time: number): string {
  // Requests and the lines of streams come many a second: most need only their milliseconds written.
  const ms = time - secondStart;
  if (ms >= 0 && ms < 1000) return `${secondPart}${three(ms)}Z`;
  let offset = time - dayStart;
  if (!(offset >= 0 && offset < DAY_MS)) {
    const iso = new Date(time).toISOString();
    dayStart = Math.floor(time / DAY_MS) * DAY_MS;
    datePart = iso.slice(0, iso.indexOf("T") + 1);
    return iso;
  }
  const hours = Math.floor(offset / 3_600_000);
  offset -= hours * 3_600_000;
  const minutes = Math.floor(offset / 60_000);
  offset -= minutes * 60_000;
  const seconds = Math.floor(offset / 1000);
  const millis = offset - seconds * 1000;
  secondStart = time - millis;
  secondPart = `${datePart}${two(hours)}:${two(minutes)}:${two(seconds)}.`;
  return `${secondPart}${three(millis)}Z`;
}
