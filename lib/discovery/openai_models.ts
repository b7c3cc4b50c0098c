/**
 * OpenAI's model list and model object (`GET /v1/models`, `GET /v1/models/{id}`), showing the key's one
 * model under the name it is bound to; in Anthropic's shape for Anthropic's clients (anthropic_models.ts).
 */
import type { Deps } from "../deps.ts";
import { GatewayError } from "../errors.ts";
import { FACES } from "../faces/mod.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import type { Client } from "../http/client.ts";
import { discover } from "./access.ts";
import { type KeyModel, namesKeyModel } from "./key_model.ts";
import { anthropicModel, anthropicModelList, asksAnthropic } from "./anthropic_models.ts";

function modelObject(model: KeyModel) {
  return {
    id: model.id,
    object: "model",
    created: Math.floor(Date.parse(model.modifiedAt) / 1000),
    owned_by: "gateway",
  };
}

export async function listModels(request: Request, client: Client, deps: Deps): Promise<Response> {
  const anthropic = asksAnthropic(request.headers);
  try {
    const { model } = await discover(request, client, deps);
    return jsonResponse(
      anthropic ? anthropicModelList(model) : { object: "list", data: [modelObject(model)] },
    );
  } catch (error) {
    return errorResponse(anthropic ? FACES.anthropic : FACES.openai, error);
  }
}

/** The id is the rest of the path: ids may hold slashes, sent raw or encoded. */
function requestedId(request: Request): string {
  const rest = new URL(request.url).pathname.replace(/^.*?\/models\//, "");
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

export async function retrieveModel(request: Request, client: Client, deps: Deps): Promise<Response> {
  const anthropic = asksAnthropic(request.headers);
  try {
    const { model } = await discover(request, client, deps);
    const id = requestedId(request);
    if (!namesKeyModel(model, id)) {
      throw new GatewayError(
        404,
        "not_found",
        `The model '${id.slice(0, 100)}' does not exist or this API key cannot use it`,
      );
    }
    return jsonResponse(anthropic ? anthropicModel(model) : modelObject(model));
  } catch (error) {
    return errorResponse(anthropic ? FACES.anthropic : FACES.openai, error);
  }
}
