/**
 * Who is asking, for discovery: the same authentication and the same expiry and allow-list checks as a chat
 * request, but no rate-limit slot and no tokens, and no usage record (clients poll their model lists).
 */
import { authenticate } from "../auth/mod.ts";
import type { Deps } from "../deps.ts";
import type { ClientInfo } from "../pipeline.ts";
import type { KeyRecord } from "../store/records.ts";
import { type KeyModel, keyModel } from "./key_model.ts";

export async function discover(
  request: Request,
  client: ClientInfo,
  deps: Deps,
): Promise<{ key: KeyRecord; model: KeyModel }> {
  const key = await authenticate(request.headers, deps.view);
  deps.policy.checkAccess(key, { headers: request.headers, peer: client.address }, deps.now());
  return { key, model: keyModel(key, deps.view.snapshot, deps.servers) };
}
