/**
 * @module The digest of the secret a connection presented last. A keep-alive client sends the same key with
 * every request, and hashing it is the costliest step of authentication (some 8 µs of a request that comes
 * alone). Each connection remembers one secret and its digest while it is open, so a secret is held no
 * longer than the connection that carries it, and one connection's secret is never another's.
 */
import { hash } from "node:crypto";

/**
 * The digest `digestSecret` stores (SHA-256, hex), computed synchronously: WebCrypto's `digest` is an async op
 * that costs some 30–50 µs per call under load, a sixth of a request's whole CPU time, against about 1 µs here.
 * The one-shot `hash` makes no hash object to update and read.
 */
export function requestDigest(secret: string): string {
  return hash("sha256", secret, "hex");
}

export class SecretMemo {
  #secret: string | undefined;
  #digest = "";

  digest(secret: string): string {
    if (secret !== this.#secret) {
      this.#digest = requestDigest(secret);
      this.#secret = secret;
    }
    return this.#digest;
  }
}
