/**
 * @module Validating a key's network allow-lists. Entries are normalized here, once, so the gateway can
 * compare them cheaply and `key show` prints them in one canonical spelling.
 */
import ipaddr from "ipaddr.js";
import { UsageError } from "./flags.ts";

/** One hostname label: letters, digits and inner hyphens (punycode `xn--` labels included). */
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  // A zone (`fe80::1%eth0`) names an interface of one machine; it means nothing to a remote peer's address.
  if (text.includes("%")) return null;
  // ipaddr.js also takes legacy IPv4 forms (`10.1`, `0x0a.0.0.1`) that nobody means in an allow-list.
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return null;
}

/** An address or a CIDR range; a range is stored by its network address (`10.1.2.3/8` → `10.0.0.0/8`). */
export function allowIp(raw: string): string {
  const invalid = () =>
    new UsageError(
      `--allow-ip must be an IP address or CIDR range (e.g. 10.0.0.0/8), got ${JSON.stringify(raw)}`,
    );
  const [text, bitsText, ...rest] = raw.trim().split("/");
  const address = parseAddress(text);
  if (!address || rest.length) throw invalid();
  if (bitsText === undefined) return address.toString();
  const maxBits = address.kind() === "ipv4" ? 32 : 128;
  const bits = /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (!(bits <= maxBits)) throw invalid();
  const network = address.kind() === "ipv4"
    ? ipaddr.IPv4.networkAddressFromCIDR(`${address}/${bits}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${address}/${bits}`);
  return `${network}/${bits}`;
}

/** `example.com` (exactly that host) or `*.example.com` (its subdomains), lower-cased. */
export function allowDomain(raw: string): string {
  const domain = raw.trim().toLowerCase();
  const host = domain.startsWith("*.") ? domain.slice(2) : domain;
  const labels = host.split(".");
  if (host.length > 253 || !labels.every((label) => LABEL.test(label))) {
    throw new UsageError(
      `--allow-domain must be a host name like example.com or *.example.com (no scheme, port or path), got ${
        JSON.stringify(raw)
      }`,
    );
  }
  return domain;
}

export function allowList(raws: string[], parse: (raw: string) => string): string[] {
  return [...new Set(raws.map(parse))];
}
