/**
 * @module Validating a key's network allow-lists. Entries are normalized here, once, so the gateway can
 * compare them cheaply and `key show` prints them in one canonical spelling.
 */
import { getPublicSuffix } from "tldts";
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

/**
 * `example.com` (exactly that host, on the default ports), `*.example.com` (its subdomains), or either with a
 * port (`localhost:3000`), lower-cased. A pattern over a whole public suffix (`*.com`, `*.co.uk`,
 * `*.github.io`) would let anyone's site in, so it is refused.
 */
export function allowDomain(raw: string): string {
  const domain = raw.trim().toLowerCase();
  const [pattern, port, ...more] = domain.split(":");
  const host = pattern.startsWith("*.") ? pattern.slice(2) : pattern;
  const labels = host.split(".");
  // A default port is left out, as browsers leave it out of an Origin.
  const portOk = port === undefined ||
    (/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535 && port !== "80" && port !== "443");
  if (more.length || !portOk || host.length > 253 || !labels.every((label) => LABEL.test(label))) {
    throw new UsageError(
      `--allow-domain must be a host name like example.com or *.example.com, with a port only if not 80 or ` +
        `443 (localhost:3000), and no scheme or path; got ${JSON.stringify(raw)}`,
    );
  }
  if (pattern.startsWith("*.") && getPublicSuffix(host, { allowPrivateDomains: true }) === host) {
    throw new UsageError(
      `--allow-domain ${
        JSON.stringify(raw)
      } covers every site under the public suffix ${host}; name the site ` +
        `(*.your-site.${host})`,
    );
  }
  return domain;
}

export function allowList(raws: string[], parse: (raw: string) => string): string[] {
  return [...new Set(raws.map(parse))];
}
