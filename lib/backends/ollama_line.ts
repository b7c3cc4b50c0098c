/**
 * @module The common line of an Ollama stream read without building its object. Ollama writes every
 * in-between line of an answer the same way, its fields in one order:
 * `{"model":"…","created_at":"…","message":{"role":"assistant","content":"…"},"done":false}`. Such a line
 * says only its text, so its text is all that is taken from it, without `JSON.parse` making the object, its
 * message and four strings per line. Any other line (thinking, tool calls, the final one, an error, other
 * fields or another order, white space, a name or time with an escape) is not recognised here and goes
 * through `JSON.parse` as before.
 */

const HEAD = '{"model":"';
const AFTER_MODEL = '","created_at":"';
const AFTER_TIME = '","message":{"role":"assistant","content":"';
const TAIL = '"},"done":false}';

/** A JSON string's closing quote at or after `from`: the first `"` not escaped. */
function closingQuote(line: string, from: number): number {
  for (let at = line.indexOf('"', from); at !== -1; at = line.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (line.charCodeAt(at - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

/** `line` from `from` to `to` has no escape or control character: JSON would take it as it is. */
function plain(line: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = line.charCodeAt(i);
    if (c < 32 || c === 92) return false;
  }
  return true;
}

/**
 * The text of a line of the common form, exactly as `JSON.parse(line).message.content` would give it;
 * undefined for any other line, which the caller then parses.
 */
export function commonLineContent(line: string): string | undefined {
  if (!line.startsWith(HEAD)) return undefined;
  const modelEnd = line.indexOf('"', HEAD.length);
  if (modelEnd === -1 || !line.startsWith(AFTER_MODEL, modelEnd)) return undefined;
  const timeStart = modelEnd + AFTER_MODEL.length;
  const timeEnd = line.indexOf('"', timeStart);
  if (timeEnd === -1 || !line.startsWith(AFTER_TIME, timeEnd)) return undefined;
  const start = timeEnd + AFTER_TIME.length;
  const end = closingQuote(line, start);
  if (end === -1 || end + TAIL.length !== line.length || !line.startsWith(TAIL, end)) return undefined;
  // The name and the time end at their first quote: one with an escape in it is not this form.
  if (!plain(line, HEAD.length, modelEnd) || !plain(line, timeStart, timeEnd)) return undefined;
  if (plain(line, start, end)) return line.slice(start, end);
  try {
    return JSON.parse(line.slice(start - 1, end + 1));
  } catch {
    return undefined;
  }
}
