/**
 * @module The common line of an Ollama stream read without building its object. Ollama writes every
 * in-between line of an answer the same way, its fields in one order:
 * `{"model":"…","created_at":"…","message":{"role":"assistant","content":"…"},"done":false}`. Such a line
 * says only its text, so its text is all that is taken from it, without `JSON.parse` making the object, its
 * message and four strings per line. Any other line (thinking, tool calls, the final one, an error, other
 * fields or another order, white space, a name or time with an escape) is not recognised here and goes
 * through `JSON.parse` as before.
 */

/**
 * The common form, anchored at both ends: a name and a time without a quote, a backslash or a control
 * character (one with an escape is not this form), and the text as JSON writes a string. The text's loop is
 * unrolled (plain runs between escapes) so that the engine keeps a backtracking entry per escape, not per
 * character. One match costs a line about a third of what a scan with `indexOf` and `startsWith` cost
 * (0.16–0.27 against 0.46–0.81 µs a line, sliced from its chunk, `--no-maglev`).
 */
const PLAIN = String.raw`[^"\\\x00-\x1f]*`;
const shape = (model: string) =>
  new RegExp(
    String
      .raw`^\{"model":"${model}","created_at":"${PLAIN}","message":\{"role":"assistant","content":"(${PLAIN}(?:\\.${PLAIN})*)"\},"done":false\}$`,
  );
const COMMON = shape(PLAIN);
/** The same form with the model's name taken too: a stream's first line names its model. */
const NAMED = shape(`(${PLAIN})`);

/**
 * Longest line matched: a line of escapes a few megabytes long would overflow the engine's backtracking
 * stack (a RangeError), and a line this long is no token of a stream anyway. Longer lines are parsed.
 */
const MAX_MATCHED = 64 * 1024;

/**
 * The text of a line of the common form, exactly as `JSON.parse(line).message.content` would give it;
 * undefined for any other line, which the caller then parses.
 */
export function commonLineContent(line: string): string | undefined {
  if (line.length > MAX_MATCHED) return undefined;
  const match = COMMON.exec(line);
  return match === null ? undefined : unescaped(match[1]);
}

/**
 * The model's name and the text of a line of the common form, as `JSON.parse` would give them (a name of this
 * form has no escape); undefined for any other line. Read once a stream, where `commonLineContent` follows.
 */
export function commonNamedLine(line: string): { model: string; content: string } | undefined {
  if (line.length > MAX_MATCHED) return undefined;
  const match = NAMED.exec(line);
  if (match === null) return undefined;
  const content = unescaped(match[2]);
  return content === undefined ? undefined : { model: match[1], content };
}

/** A JSON string's body as its value; undefined for an escape JSON does not have. */
function unescaped(text: string): string | undefined {
  if (!text.includes("\\")) return text;
  try {
    return JSON.parse(`"${text}"`);
  } catch {
    // The caller's parse says the stream is malformed.
    return undefined;
  }
}
