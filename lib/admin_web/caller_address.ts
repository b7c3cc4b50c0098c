/**
 * @module The address an admin caller is known by, in the audit trail and to the throttle of failed logins:
 * the client's own, read through the proxies listed in `GATEWAY_TRUST_PROXY` exactly as the chat path reads
 * it (`lib/policy/client_address.ts`), so a gateway behind a proxy does not name the proxy for everyone.
 */
import type { Client } from "../http/client.ts";
import { clientAddress } from "../policy/client_address.ts";
import type { RangeList } from "../policy/ip_address.ts";

/** Undefined when it cannot be told (no peer address, or a trusted proxy forwarded something unreadable). */
export function callerAddress(request: Request, client: Client, trusted: RangeList): string | undefined {
  return clientAddress(client.address, request.headers.get("x-forwarded-for"), trusted)?.toString();
}
