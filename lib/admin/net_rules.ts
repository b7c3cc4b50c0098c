/**
 * @module Validating a key's network allow-lists. Entries are normalized here, once, so the gateway can
 * compare them cheaply and `key show` prints them in one canonical spelling.
 */
import { formatRange, parseRange } from "../policy/ip_address.ts";
import { UsageError } from "./flags.ts";

/** One hostname label: letters, digits and inner hyphens (punycode `xn--` labels included). */
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** An address or a CIDR range; a range is stored by its network address (`10.1.2.3/8` → `10.0.0.0/8`). */
export function allowIp(raw: string): string {
  const range = parseRange(raw);
  if (!range) {
    throw new UsageError(
      `--allow-ip must be an IP address or CIDR range (e.g. 10.0.0.0/8), got ${JSON.stringify(raw)}`,
    );
  }
  return formatRange(range);
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
