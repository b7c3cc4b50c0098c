/**
 * Ollama's discovery endpoints: `/api/tags` and `/api/show` show the key's one model under its format-B
 * name, with what the servers' model lists said about it; `/api/show`'s capabilities are what the key may
 * do (tools, vision, thinking follow its toggles), since that, not the model alone, decides what a client
 * can use. `/api/show` answers for whatever name it is asked about, as chat does: the key decides the model,
 * so a client that asks about the name it will chat with learns what its chats will get. `/api/version` and
 * `/` answer without a key, like Ollama's liveness checks.
 */
import type { Deps } from "../deps.ts";
import { InvalidRequest } from "../errors.ts";
import { ROUTE_FACES } from "../faces/mod.ts";
import type { Client } from "../http/client.ts";
import { readAsJson, readJsonBody } from "../http/read_body.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import { discover } from "./access.ts";
import type { KeyModel } from "./key_model.ts";

/**
 * The Ollama API level the gateway's format B speaks (tool-call ids, `think` levels); clients that gate
 * features on the version read this, never a backend's version.
 */
export const OLLAMA_API_VERSION = "0.12.10";

export function details(model: KeyModel) {
  const f = model.facts ?? {};
  return {
    parent_model: f.parentModel ?? "",
    format: f.format ?? "",
    family: f.family ?? "",
    families: f.families ?? (f.family ? [f.family] : null),
    parameter_size: f.parameterSize ?? "",
    quantization_level: f.quantizationLevel ?? "",
  };
}

function tagsEntry(model: KeyModel) {
  return {
    name: model.ollamaName,
    model: model.ollamaName,
    modified_at: model.modifiedAt,
    size: model.facts?.sizeBytes ?? 0,
    digest: model.facts?.digest ?? "",
    details: details(model),
  };
}

export async function tags(request: Request, client: Client, deps: Deps): Promise<Response> {
  try {
    return jsonResponse({ models: [tagsEntry((await discover(request, client, deps)).model)] });
  } catch (error) {
    return errorResponse(ROUTE_FACES.ollama_api, error);
  }
}

export async function show(request: Request, client: Client, deps: Deps): Promise<Response> {
  try {
    const { key, model } = await discover(request, client, deps);
    const body = await readJsonBody(readAsJson(request), deps.config);
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new InvalidRequest("The request body must be a JSON object");
    }
    // Any name, or none, as on chat; a name that is not text is a malformed request, as it is there.
    const asked = body as Record<string, unknown>;
    for (const field of ["model", "name"]) {
      if (asked[field] !== undefined && typeof asked[field] !== "string") {
        throw new InvalidRequest(`${field} must be a string`);
      }
    }
    const capabilities = ["completion"];
    if (key.tools) capabilities.push("tools");
    if (key.vision) capabilities.push("vision");
    if (key.thinking) capabilities.push("thinking");
    const family = model.facts?.family;
    return jsonResponse({
      license: "",
      modelfile: "",
      parameters: "",
      template: "",
      details: details(model),
      model_info: family ? { "general.architecture": family } : {},
      capabilities,
      modified_at: model.modifiedAt,
    });
  } catch (error) {
    return errorResponse(ROUTE_FACES.ollama_api, error);
  }
}

export function version(): Response {
  return jsonResponse({ version: OLLAMA_API_VERSION });
}

/** What Ollama's root answers; UIs check it to tell a live Ollama. */
export function root(): Response {
  return new Response("Ollama is running", { headers: { "Content-Type": "text/plain; charset=utf-8" } });
}
