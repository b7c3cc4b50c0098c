/**
 * @module Turning `server add` / `server update` flags into a change to a `ServerRecord`. Both verbs share
 * one reading so a value accepted by one is accepted by the other.
 */
import { BACKEND_KINDS, type BackendKind, type ServedModel, type ServerRecord } from "../store/records.ts";
import { type FlagReader, modelTag, UsageError } from "./flags.ts";
import type { FlagSpec } from "./command.ts";
import type { Patch } from "./patch.ts";

export const SERVER_FLAGS = {
  url: {
    type: "string",
    value: "URL",
    help: "the backend's base address, http or https (the gateway appends the API paths)",
  },
  model: {
    type: "string",
    multiple: true,
    value: "TAG[=ALIAS]",
    help: "a model the server carries, by the backend's tag; ALIAS is the name format-B clients see",
  },
  weight: {
    type: "string",
    value: "N",
    help: "share of traffic against other servers of a model (default 1)",
  },
  kind: { type: "string", value: "ollama|openai", help: "the backend's API (default ollama)" },
  "max-ctx": {
    type: "string",
    value: "N",
    help: "context window ceiling for requests sent here (none clears)",
  },
  "max-predict": {
    type: "string",
    value: "N",
    help: "ceiling on tokens generated per request (none clears)",
  },
  "api-key": {
    type: "string",
    value: "SECRET",
    help: "bearer key the backend wants; never printed (none clears)",
  },
  slots: { type: "string", value: "N", help: "requests the server runs at once (none clears)" },
  disabled: { type: "boolean", help: "keep the server out of routing until enabled" },
} satisfies Record<string, FlagSpec>;

export function serverUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url must be an absolute http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--url must use http or https, got ${JSON.stringify(raw)}`);
  }
  // Credentials in a URL would be printed by every `server list`; --api-key is kept out of output.
  if (url.username || url.password) {
    throw new UsageError(`--url must not contain credentials (use --api-key), got a URL with a user part`);
  }
  if (url.search || url.hash) {
    throw new UsageError(`--url must be a base URL without query or fragment, got ${JSON.stringify(raw)}`);
  }
  // Adapters append their own paths, so a trailing slash would double up.
  return url.href.replace(/\/+$/, "");
}

/** `TAG` or `TAG=ALIAS`; split at the first `=` because tags never contain one but aliases might. */
export function servedModel(raw: string): ServedModel {
  const eq = raw.indexOf("=");
  if (eq === 0 || eq === raw.length - 1) {
    throw new UsageError(`--model must be TAG or TAG=ALIAS, got ${JSON.stringify(raw)}`);
  }
  if (eq < 0) return { tag: modelTag("model", raw) };
  const tag = modelTag("model", raw.slice(0, eq));
  const alias = modelTag("model", raw.slice(eq + 1));
  return alias === tag ? { tag } : { tag, alias };
}

export function servedModels(raws: string[]): ServedModel[] {
  if (!raws.length) throw new UsageError("--model is required (at least one)");
  const models = raws.map(servedModel);
  // Clients pick a model by its shown name; two entries with one name would make that choice ambiguous.
  const shown = new Set<string>();
  for (const model of models) {
    const name = model.alias ?? model.tag;
    if (shown.has(name)) throw new UsageError(`--model names ${JSON.stringify(name)} more than once`);
    shown.add(name);
  }
  return models;
}

function backendKind(raw: string): BackendKind {
  const kind = BACKEND_KINDS.find((k) => k === raw);
  if (!kind) {
    throw new UsageError(`--kind must be one of ${BACKEND_KINDS.join(", ")}, got ${JSON.stringify(raw)}`);
  }
  return kind;
}

/** The fields the given flags change. `--enabled` is read too; only update declares it. */
export function serverPatch(flags: FlagReader): Patch<ServerRecord> {
  const url = flags.string("url");
  const models = flags.list("model");
  const kind = flags.string("kind");
  return {
    url: url === undefined ? undefined : serverUrl(url),
    models: models === undefined ? undefined : servedModels(models),
    weight: flags.count("weight"),
    kind: kind === undefined ? undefined : backendKind(kind),
    maxCtx: flags.optionalCount("max-ctx"),
    maxPredict: flags.optionalCount("max-predict"),
    apiKey: flags.optionalText("api-key"),
    slots: flags.optionalCount("slots"),
    enabled: flags.toggle("enabled", "disabled"),
  };
}
