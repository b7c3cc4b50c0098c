/**
 * Anthropic's model list and model object, for its clients on the same `GET /v1/models` paths: a request that
 * carries Anthropic's headers (`anthropic-version`, or the key as `x-api-key`) is answered in its shape, and
 * its errors in its format; every other request keeps OpenAI's.
 */
import type { KeyModel } from "./key_model.ts";

export function asksAnthropic(headers: Headers): boolean {
  return headers.has("anthropic-version") || headers.has("x-api-key");
}

export function anthropicModel(model: KeyModel) {
  return { type: "model", id: model.id, display_name: model.id, created_at: model.modifiedAt };
}

/** One page that holds the key's one model. */
export function anthropicModelList(model: KeyModel) {
  return { data: [anthropicModel(model)], has_more: false, first_id: model.id, last_id: model.id };
}
