/**
 * @module The gateway's own listener as the gateway uses it: it bounds connections in number and in time,
 * passes every request through the drain, which lets running requests finish when the gateway stops
 * (lib/gateway.ts stops it), and hands the app each request's `Client`: its connection's address and memo of
 * secrets, and the cut the drain gave it.
 */
import type { Config } from "../config.ts";
import { type Client, newClient } from "../http/client.ts";
import type { Drain } from "./drain.ts";
import { parseAddress, RangeList } from "../policy/ip_address.ts";
import { DEFAULT_MAX_CONNECTIONS, listen, type Listening, type RequestHandler } from "./listener.ts";

interface FetchApp {
  fetch(request: Request, client: Client): Response | Promise<Response>;
}

export interface GatewayAddress {
  hostname: string;
  port: number;
  /** SO_REUSEPORT: the workers of `start:parallel` listen on one port and the kernel spreads connections. */
  reusePort?: boolean;
}

/** The gateway's listener on `address`, with the configured bounds, every request going through `drain`. */
export function listenForGateway(
  app: FetchApp,
  config: Config,
  drain: Drain,
  address: GatewayAddress,
): Listening {
  const handler: RequestHandler = (request, from, delivered) =>
    drain.handle(
      request,
      delivered,
      (cut) => app.fetch(request, newClient(cut, from.address, from.secrets)),
    );
  return listen({
    ...address,
    limits: {
      headTimeoutMs: config.headTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      maxConnections: config.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      maxPerAddress: config.maxConnectionsPerAddress,
      exempt: trustedProxy(config.trustProxy),
    },
  }, handler);
}

/** Whether an address is one of the trusted proxies, which carry many clients' connections. */
function trustedProxy(entries: readonly string[]): ((address: string) => boolean) | undefined {
  const proxies = RangeList.strict(entries);
  if (proxies.size === 0) return undefined;
  return (address) => {
    const parsed = parseAddress(address);
    return parsed !== null && proxies.has(parsed);
  };
}
