/**
 * Who is asking, for discovery: the same authentication (with the connection's remembered secret) and the same
 * expiry and allow-list checks as a chat request, but no rate-limit slot and no tokens, and no usage record
 * (clients poll their model lists). The key found is noted on the `Client`, for CORS.
 */
import { authenticate } from "../auth/mod.ts";
import type { Deps } from "../deps.ts";
import type { Client } from "../http/client.ts";
import type { KeyRecord } from "../store/records.ts";
import { type KeyModel, keyModel } from "./key_model.ts";

export async function discover(
  request: Request,
  client: Client,
  deps: Deps,
): Promise<{ key: KeyRecord; model: KeyModel }> {
  // None until one is found: a refusal leaves it so.
  client.key = null;
  const key = client.key = await authenticate(request.headers, deps.view, client.secrets);
  deps.policy.checkAccess(key, { headers: request.headers, peer: client.address }, deps.now());
  return { key, model: keyModel(key, deps.view.snapshot, deps.servers) };
}
