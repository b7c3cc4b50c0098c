/**
 * @module Key secrets and their digests. Secrets are 256 random bits, so a single SHA-256 is a safe digest:
 * there is nothing to brute-force, and a fast digest keeps authentication cheap on the hot path.
 */

const SECRET_PREFIX = "gwk_";

function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function generateSecret(): string {
  return SECRET_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** Short, random, URL-safe id for admin references (never usable as a credential). */
export function generateKeyId(): string {
  const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  let id = "key_";
  for (const b of bytes) id += alphabet[b & 31];
  return id;
}

export async function digestSecret(secret: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret));
  const bytes = new Uint8Array(hash);
  let hex = "";
  for (const b of bytes) hex += b.toString(16).padStart(2, "0");
  return hex;
}

export function secretHint(secret: string): string {
  return secret.slice(0, SECRET_PREFIX.length + 4) + "…";
}
