/**
 * @module Reading parsed flags into typed values. Every malformed value becomes a `UsageError` naming the
 * flag and the offending text, so the CLI can exit 2 with one line instead of storing something half-valid.
 */

/** The command line itself is wrong (as opposed to a `RecordError`: the store refused a valid request). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The value that clears an optional field on update; reserved, so it can never be a record name. */
export const NONE = "none";

/** Names travel in commands, KV keys and key records, so they stay short and free of spaces and quotes. */
const NAME_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N}._@:+-]{0,127}$/u;

/** Model tags are the backend's own names (`llama3.1:8b`, `org/model`); only emptiness and spaces are wrong. */
const TAG_PATTERN = /^\S{1,256}$/;

export type RawFlags = Record<string, string | boolean | (string | boolean)[] | undefined>;

export function recordName(flag: string, raw: string): string {
  if (raw === NONE) throw new UsageError(`--${flag} cannot be "${NONE}": that word clears fields on update`);
  if (!NAME_PATTERN.test(raw)) {
    throw new UsageError(
      `--${flag} must be 1-128 letters, digits or ._@:+- starting with a letter or digit, got ${
        JSON.stringify(raw)
      }`,
    );
  }
  return raw;
}

export function modelTag(flag: string, raw: string): string {
  if (!TAG_PATTERN.test(raw)) {
    throw new UsageError(`--${flag} must be a model name without spaces, got ${JSON.stringify(raw)}`);
  }
  return raw;
}

export function positiveInt(flag: string, raw: string, orNone = false): number {
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    const expected = orNone ? `a positive integer or "${NONE}"` : "a positive integer";
    throw new UsageError(`--${flag} must be ${expected}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Typed access to one verb's flags. `undefined` means "not given"; `null` means "given as none". */
export class FlagReader {
  constructor(private readonly values: RawFlags) {}

  given(name: string): boolean {
    return this.values[name] !== undefined;
  }

  /**
   * Whether anything besides `--json` (and the switches in `besides`, which change nothing by themselves) was
   * given; an update without changes is a mistake worth reporting.
   */
  anyGiven(...besides: string[]): boolean {
    return Object.entries(this.values).some(([name, value]) =>
      name !== "json" && !besides.includes(name) && value !== undefined
    );
  }

  bool(name: string): boolean {
    return this.values[name] === true;
  }

  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === "string" ? value : undefined;
  }

  required(name: string): string {
    const value = this.string(name);
    if (value === undefined) throw new UsageError(`--${name} is required`);
    return value;
  }

  list(name: string): string[] | undefined {
    const value = this.values[name];
    return Array.isArray(value) ? value.map(String) : undefined;
  }

  count(name: string): number | undefined {
    const raw = this.string(name);
    return raw === undefined ? undefined : positiveInt(name, raw);
  }

  optionalCount(name: string): number | null | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    return raw === NONE ? null : positiveInt(name, raw, true);
  }

  optionalText(name: string): string | null | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (raw === NONE) return null;
    if (raw.trim() === "") throw new UsageError(`--${name} must not be empty (use "${NONE}" to clear it)`);
    return raw;
  }

  /** A `--x` / `--no-x` pair: true, false, or undefined when neither was given. */
  toggle(on: string, off: string): boolean | undefined {
    if (this.bool(on) && this.bool(off)) throw new UsageError(`--${on} and --${off} contradict each other`);
    if (this.bool(on)) return true;
    return this.bool(off) ? false : undefined;
  }
}
