import assert from "node:assert/strict";
import { requestDigest, SecretMemo } from "./secret_memo.ts";

Deno.test("a connection's memo gives each secret its own digest, however the secrets alternate", () => {
  const memo = new SecretMemo();
  for (const secret of ["gwk_a", "gwk_a", "gwk_b", "gwk_a", "gwk_b", "gwk_b", "gwk_c", "gwk_a"]) {
    assert.equal(memo.digest(secret), requestDigest(secret), secret);
  }
});
