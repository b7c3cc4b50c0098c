/**
 * @module The chat pipeline: every chat request, whichever path and face, runs these stages in this order.
 * The stages decide; this file only sequences them.
 */
import { authenticate } from "./auth/mod.ts";
import { enforcePolicy } from "./policy/mod.ts";
import { readJsonBody } from "./http/read_body.ts";
import { errorResponse, jsonResponse } from "./http/respond.ts";
import { fitToServer, shapeForKey } from "./shape/mod.ts";
import { dispatch, findCandidates, weightedOrder } from "./routing/mod.ts";
import { BACKENDS } from "./backends/mod.ts";
import type { Face } from "./faces/mod.ts";
import type { Deps } from "./deps.ts";

/** What the connection tells about the caller, beyond the request itself. */
export interface ClientInfo {
  /** The socket peer's address. */
  address?: string;
}

export async function runChat(
  face: Face,
  request: Request,
  _client: ClientInfo,
  deps: Deps,
): Promise<Response> {
  const startedAt = deps.now();
  const startedTick = performance.now();
  try {
    const key = await authenticate(request.headers.get("authorization"), deps.view);
    enforcePolicy(key, startedAt);
    const chat = face.parse(await readJsonBody(request, deps.config.maxBodyBytes));
    const shaped = shapeForKey(chat, key);
    const candidates = weightedOrder(
      findCandidates(deps.view.snapshot, key),
      (c) => c.server.weight,
      deps.random,
    );
    const callContext = {
      fetch: deps.fetch,
      firstByteTimeoutMs: deps.config.firstByteTimeoutMs,
      responseTimeoutMs: deps.config.responseTimeoutMs,
      signal: request.signal,
    };
    const { value: result, candidate } = await dispatch(
      key.model,
      candidates,
      (c) =>
        BACKENDS[c.server.kind].chat(fitToServer(shaped, key, c.server, c.model.tag), c.server, callContext),
    );
    const body = face.renderResult(result, {
      requestId: crypto.randomUUID().replaceAll("-", ""),
      startedAt,
      finishedAt: deps.now(),
      durationNs: Math.max(1, Math.round((performance.now() - startedTick) * 1e6)),
      alias: candidate.model.alias ?? candidate.model.tag,
    });
    return jsonResponse(body);
  } catch (error) {
    return errorResponse(face, error);
  }
}
