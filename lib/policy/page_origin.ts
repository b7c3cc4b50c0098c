/**
 * @module Which web pages may read an answer (CORS). A key with a domain list admits the pages of those sites
 * and no other; for a key without one, and for a request without a valid key, the admin's list decides
 * (GATEWAY_CORS_ORIGINS: the origins named, or any page for `*`, though never an opaque `null` origin).
 * Refusals follow the same rule, so a page can read why its admitted key was refused, never an answer meant
 * for another site.
 */
import type { KeyRecord } from "../store/records.ts";
import { domainAllowed, referrerHost } from "./allow_lists.ts";

/** Whether a page from `origin` may read the answer to a request made with `key` (null: none valid). */
export function pageMayRead(origin: string, key: KeyRecord | null, listed: readonly string[]): boolean {
  if (key && key.allowDomains.length) {
    const host = referrerHost(origin);
    return host !== null && domainAllowed(key, host);
  }
  return listed.includes(origin) || (origin !== "null" && listed.includes("*"));
}
