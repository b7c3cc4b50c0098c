import assert from "node:assert/strict";
import { digestSecret, generateSecret } from "../store/key_secret.ts";
import { bearerSecret, presentedSecret } from "./mod.ts";
import { requestDigest } from "./secret_memo.ts";

Deno.test("the request digest is the stored digest of the same secret", async () => {
  for (const secret of [generateSecret(), generateSecret(), "gwk_short", "ключ-ü-🔑"]) {
    assert.equal(requestDigest(secret), await digestSecret(secret));
  }
  assert.notEqual(requestDigest("gwk_a"), requestDigest("gwk_b"));
});

Deno.test("the bearer secret is read from the Authorization header, any case of the scheme", () => {
  assert.equal(bearerSecret("Bearer gwk_abc"), "gwk_abc");
  assert.equal(bearerSecret("  bearer   gwk_abc  "), "gwk_abc");
  assert.equal(bearerSecret("Basic gwk_abc"), undefined);
  assert.equal(bearerSecret(null), undefined);
});

Deno.test("a key is the bearer token, else the x-api-key header; a bearer token wins over it", () => {
  const secret = (headers: Record<string, string>) => presentedSecret(new Headers(headers));
  assert.equal(secret({ Authorization: "Bearer gwk_a" }), "gwk_a");
  assert.equal(secret({ "x-api-key": "gwk_b" }), "gwk_b");
  assert.equal(secret({ "X-Api-Key": "  gwk_b  " }), "gwk_b");
  assert.equal(secret({ Authorization: "Bearer gwk_a", "x-api-key": "gwk_b" }), "gwk_a");
  assert.equal(secret({ Authorization: "Basic abc", "x-api-key": "gwk_b" }), "gwk_b");
  assert.equal(secret({ "x-api-key": "two words" }), undefined);
  assert.equal(secret({ "x-api-key": "" }), undefined);
  assert.equal(secret({}), undefined);
});
