/**
 * What a server's model list says about each model (size, digest, family, quantization...), kept from the
 * health probes so model discovery can show it without asking a backend per client call. Backend values are
 * untrusted: only strings and numbers of the expected type, and strings of bounded length, are kept.
 */

export interface ModelFacts {
  /** When the model was last changed on the server, ISO 8601. */
  modifiedAt?: string;
  sizeBytes?: number;
  digest?: string;
  format?: string;
  family?: string;
  families?: string[];
  parameterSize?: string;
  quantizationLevel?: string;
  parentModel?: string;
}

const MAX_TEXT = 200;

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length <= MAX_TEXT ? value : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function isoTime(value: unknown): string | undefined {
  const shown = text(value);
  return shown !== undefined && !Number.isNaN(Date.parse(shown)) ? shown : undefined;
}

/** One entry of an Ollama `/api/tags` list. */
export function ollamaModelFacts(entry: unknown): ModelFacts {
  const e = (entry ?? {}) as Record<string, unknown>;
  const d = (typeof e.details === "object" && e.details ? e.details : {}) as Record<string, unknown>;
  const families = Array.isArray(d.families)
    ? d.families.slice(0, 16).flatMap((f) => text(f) ?? [])
    : undefined;
  return {
    modifiedAt: isoTime(e.modified_at),
    sizeBytes: count(e.size),
    digest: text(e.digest),
    format: text(d.format),
    family: text(d.family),
    families,
    parameterSize: text(d.parameter_size),
    quantizationLevel: text(d.quantization_level),
    parentModel: text(d.parent_model),
  };
}

/** One entry of an OpenAI-compatible `/v1/models` list: only its creation time says anything. */
export function openaiModelFacts(entry: unknown): ModelFacts {
  const created = count((entry as Record<string, unknown> | null)?.created);
  return { modifiedAt: created === undefined ? undefined : new Date(created * 1000).toISOString() };
}
