/**
 * @module The caller of one request, as the gateway knows it beyond the request itself: one `Client`, built
 * where the request gets its cut (lib/server/serve.ts under the gateway's own listener, `Gateway.fetch`
 * under `deno serve`) and read by every stage and handler that answers it.
 */
import type { SecretMemo } from "../auth/secret_memo.ts";
import type { KeyRecord } from "../store/records.ts";
import type { Cut } from "../runtime/request_cut.ts";

export interface Client {
  /** The socket peer's address; undefined when the request was handed over without one. */
  address?: string;
  /** Aborts when the client leaves or the gateway ends the request (shutdown); backend calls follow it. */
  cut: Cut;
  /** The connection's last secret and its digest (lib/auth/secret_memo.ts), where the listener keeps one. */
  secrets?: SecretMemo;
  /**
   * The key authentication found for this request, once a stage asked (null: it found none), so that what
   * follows the answer (CORS) need not authenticate again; undefined while no stage asked.
   */
  key?: KeyRecord | null;
}

/**
 * A request's `Client`. Every one is made here, so all have one shape: the stages that read and mark them
 * stay monomorphic.
 */
export function newClient(cut: Cut, address?: string, secrets?: SecretMemo): Client {
  return { address, cut, secrets, key: undefined };
}
