/**
 * @module What a stopping gateway answers a request that still comes (on a connection kept alive from before
 * the signal): 503 `shutting_down` in the error shape of the path it came on, with `Retry-After`, and the
 * connection closed after it, so the client takes its next request elsewhere. On a chat path the refusal is
 * recorded like every other: under the key it names when that key is known, else as a key-less refusal
 * (which the ledger bounds like any other). The body is never read.
 */
import { authenticate } from "../auth/mod.ts";
import { RequestAccount } from "../account/mod.ts";
import type { Deps } from "../deps.ts";
import { ShuttingDown } from "../errors.ts";
import type { Face } from "../faces/mod.ts";
import type { Client } from "../http/client.ts";
import { errorResponse } from "../http/respond.ts";
import { isPending } from "../runtime/sync_or_promise.ts";

/** A stopping gateway comes back (restarted) or another takes over within moments. */
const STOPPING_HEADERS = { Connection: "close", "Retry-After": "1" };

/** The refusal in `face`'s error shape, for a path that records nothing. */
export function stoppingResponse(face: Face): Response {
  return errorResponse(face, new ShuttingDown(), STOPPING_HEADERS);
}

/** The refusal on a chat path, recorded with the request's key when it names a known one. */
export async function refuseChat(
  face: Face,
  request: Request,
  client: Client,
  deps: Deps,
): Promise<Response> {
  const account = new RequestAccount(deps.usage, face.name, deps.now(), deps.metrics);
  try {
    const found = authenticate(request.headers, deps.view, client.secrets);
    client.key = account.key = isPending(found) ? await found : found;
  } catch {
    // No key, or none known (or the store could not say): a key-less refusal, as a 401 is recorded.
    client.key = null;
  }
  const error = new ShuttingDown();
  account.refused(error);
  return errorResponse(face, error, STOPPING_HEADERS);
}
