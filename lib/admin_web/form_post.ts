/** @module What every admin form post goes through before its content is trusted: origin and size. */
import type { Deps } from "../deps.ts";
import { readBounded } from "../http/read_body.ts";

/**
 * A form post must come from the admin page itself: browsers send `Origin` (and `Sec-Fetch-Site`) with every
 * POST, so another site's form is refused even before the SameSite cookie rule applies.
 */
export function sameOrigin(request: Request): boolean {
  if (request.headers.get("sec-fetch-site") === "cross-site") return false;
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  try {
    return new URL(origin).host === (request.headers.get("host") ?? new URL(request.url).host);
  } catch {
    return false;
  }
}

export async function readForm(
  request: Request,
  deps: Deps,
  maxBytes: number,
): Promise<URLSearchParams | undefined> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded") || !request.body) return undefined;
  const limits = { maxBodyBytes: maxBytes, bodyTimeoutMs: deps.config.bodyTimeoutMs };
  try {
    return new URLSearchParams(new TextDecoder().decode(await readBounded(request.body, limits)));
  } catch {
    return undefined;
  }
}
