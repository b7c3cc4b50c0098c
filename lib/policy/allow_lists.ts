/**
 * @module A key's network allow-lists: client IP ranges and referrer domains. Rules are compiled once per key
 * record (records are replaced, never mutated, when an admin changes them), so a request pays for matching
 * only, never for parsing.
 */
import { Forbidden } from "../errors.ts";
import type { KeyRecord } from "../store/records.ts";
import type { Address } from "./ip_address.ts";
import { RangeList } from "./ip_address.ts";

interface CompiledRules {
  ips: RangeList;
  /** Hosts allowed exactly. */
  hosts: Set<string>;
  /** `.example.com` for each `*.example.com`: any host ending so is allowed. */
  suffixes: string[];
}

const compiled = new WeakMap<KeyRecord, CompiledRules>();

function rulesOf(key: KeyRecord): CompiledRules {
  let rules = compiled.get(key);
  if (!rules) {
    const domains = key.allowDomains.map((d) => d.toLowerCase());
    rules = {
      ips: RangeList.lenient(key.allowIps),
      hosts: new Set(domains.filter((d) => !d.startsWith("*."))),
      suffixes: domains.filter((d) => d.startsWith("*.")).map((d) => d.slice(1)),
    };
    compiled.set(key, rules);
  }
  return rules;
}

export function checkIp(key: KeyRecord, address: Address | null): void {
  if (key.allowIps.length === 0) return;
  if (!address || !rulesOf(key).ips.has(address)) {
    const seen = address ? `IP address ${address}` : "an unknown IP address";
    throw new Forbidden(`Requests from ${seen} are not allowed for this API key`);
  }
}

/**
 * The site of an `Origin` or `Referer` value as the domain list names sites: its host, lower-cased and
 * without a trailing dot, with `:port` when the port is not its scheme's default. Only web pages have one:
 * another scheme (`file:`, an extension's) gives null, so `file://app.example.com` is not app.example.com.
 */
export function referrerHost(value: string | null): string | null {
  if (!value || value === "null") return null;
  try {
    const url = new URL(value);
    if (url.protocol !== "https:" && url.protocol !== "http:") return null;
    const host = url.hostname.toLowerCase().replace(/\.$/, "");
    if (!host) return null;
    // The URL parser leaves the port empty when it is the scheme's default.
    return url.port ? `${host}:${url.port}` : host;
  } catch {
    return null;
  }
}

/** Whether a host is on the key's domain list (exactly, or under one of its `*.` entries). */
export function domainAllowed(key: KeyRecord, host: string): boolean {
  const { hosts, suffixes } = rulesOf(key);
  return hosts.has(host) || suffixes.some((suffix) => host.endsWith(suffix));
}

/**
 * The host of `Origin`, else of `Referer`. Browsers send at least one on cross-site calls and scripts can
 * forge both, so this list keeps a key embedded in a web page on its own sites; it is not authentication.
 */
export function checkDomain(key: KeyRecord, headers: Headers): void {
  if (key.allowDomains.length === 0) return;
  const host = referrerHost(headers.get("origin")) ?? referrerHost(headers.get("referer"));
  if (!host) {
    throw new Forbidden(
      "This API key accepts only requests from its allowed sites: no Origin or Referer was sent",
    );
  }
  if (domainAllowed(key, host)) return;
  throw new Forbidden(`Requests from ${host} are not allowed for this API key`);
}
