/**
 * @module Which `Host` the metrics port answers (DNS rebinding defence). A page on another site can make a
 * browser on the scraper's machine resolve that site's name to 127.0.0.1 and read the port as its own origin;
 * such a request still names the site in `Host`. So the port answers only an IP address (no name to rebind),
 * `localhost` and names under it (browsers resolve those themselves), and the names the operator lists
 * (`GATEWAY_METRICS_HOSTNAMES`). A request without `Host` comes from no browser, which always sends one.
 */

/** A hostname as `Host` and the setting write it: lower case, without a trailing dot. */
function normalName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const HOSTNAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** Whether `name` can be listed: a DNS name (an address needs no listing). */
export function isHostname(name: string): boolean {
  return HOSTNAME.test(normalName(name)) && !IPV4.test(name);
}

/** The check for one listener: `accepts(request.headers.get("host"))`. */
export function hostCheck(names: readonly string[]): (host: string | null) => boolean {
  const listed = new Set(names.map(normalName));
  return (host) => {
    if (host === null) return true;
    // An IPv6 literal is bracketed, with or without a port after it.
    if (host.startsWith("[")) return host.indexOf("]") > 1;
    const colon = host.indexOf(":");
    const name = normalName(colon < 0 ? host : host.slice(0, colon));
    return IPV4.test(name) || name === "localhost" || name.endsWith(".localhost") || listed.has(name);
  };
}
