/**
 * @module Who the client is, by IP. The socket's peer address, unless that peer is a proxy the admin trusts
 * (`GATEWAY_TRUST_PROXY`): then `X-Forwarded-For` is read from the right, skipping trusted proxies, and the
 * first address that is not one is the client. Everything left of it was written by parties nobody vouches
 * for, so a client cannot pick its own address by sending the header itself.
 */
import { type Address, parseAddress, RangeList } from "./ip_address.ts";

/** Strips what proxies sometimes add around an address: brackets and a port. */
function bareAddress(text: string): string {
  const entry = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  if (bracketed) return bracketed[1];
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry);
  return v4WithPort ? v4WithPort[1] : entry;
}

/**
 * The client's address, or null when it cannot be told (no peer address, or a trusted proxy forwarded
 * something that is not an address). A null address matches no allow-list.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | null,
  trusted: RangeList,
): Address | null {
  let address = peer === undefined ? null : parseAddress(bareAddress(peer));
  if (!address || trusted.size === 0 || !forwardedFor) return address;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0 && trusted.has(address); i--) {
    address = parseAddress(bareAddress(hops[i]));
    if (!address) return null;
  }
  return address;
}
