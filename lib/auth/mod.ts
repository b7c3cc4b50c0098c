/**
 * @module Authentication: the presented secret → digest → one indexed lookup (cached by the store view).
 * Decides only who is calling; what the key may do is policy's business. A key is presented as
 * `Authorization: Bearer <key>`, or as `x-api-key: <key>` (Anthropic's clients, Claude Code), on every path.
 */
import { requestDigest, type SecretMemo } from "./secret_memo.ts";
import { Unauthenticated } from "../errors.ts";
import type { KeyRecord } from "../store/records.ts";
import type { StoreView } from "../store/view.ts";

/** Longer values cannot be keys; refusing them early keeps hashing work bounded. */
const MAX_SECRET_LENGTH = 256;

export function bearerSecret(header: string | null): string | undefined {
  if (!header) return undefined;
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * The secret a request presents: the bearer token, else the `x-api-key` header. Only a request without a
 * bearer token looks further, so the chat paths' clients pay nothing for the second way.
 */
export function presentedSecret(headers: Headers): string | undefined {
  const bearer = bearerSecret(headers.get("authorization"));
  if (bearer !== undefined) return bearer;
  const apiKey = headers.get("x-api-key")?.trim();
  return apiKey && !/\s/.test(apiKey) ? apiKey : undefined;
}

/**
 * The caller's key, or a throw. A key seen before is found without a wait: a promise is returned only when
 * the store must be read, as each one awaited costs a request a turn of the microtask queue. `memo` is the
 * connection's, where the listener keeps one: the secret's digest is then made once per connection.
 */
export function authenticate(
  headers: Headers,
  view: StoreView,
  memo?: SecretMemo,
): KeyRecord | Promise<KeyRecord> {
  const secret = presentedSecret(headers);
  if (!secret) throw new Unauthenticated();
  if (secret.length > MAX_SECRET_LENGTH) throw new Unauthenticated("Invalid API key");
  const found = view.findKey(memo ? memo.digest(secret) : requestDigest(secret));
  return found instanceof Promise ? found.then(known) : known(found);
}

function known(key: KeyRecord | null): KeyRecord {
  if (!key) throw new Unauthenticated("Invalid API key");
  return key;
}
