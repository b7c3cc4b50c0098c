import assert from "node:assert/strict";
import { hostCheck, isHostname } from "./metrics_host.ts";

Deno.test("metrics Host: addresses, localhost and listed names pass; any other name is refused", () => {
  const accepts = hostCheck(["Metrics.Internal."]);
  for (
    const host of [
      null,
      "127.0.0.1",
      "127.0.0.1:9464",
      "10.0.0.5:9464",
      "[::1]",
      "[::1]:9464",
      "localhost",
      "LOCALHOST:9464",
      "localhost.",
      "prom.localhost:9464",
      "metrics.internal",
      "metrics.internal.:9464",
    ]
  ) {
    assert.equal(accepts(host), true, String(host));
  }
  for (
    const host of [
      "",
      "evil.example",
      "evil.example:9464",
      "127.0.0.1.evil.example",
      "localhost.evil.example",
      "metrics.internal.evil.example",
      "[",
      "[]",
      "metrics",
    ]
  ) {
    assert.equal(accepts(host), false, host);
  }
});

Deno.test("metrics Host: only DNS names may be listed", () => {
  for (const name of ["metrics.internal", "gw-1", "a.b.c."]) assert.equal(isHostname(name), true, name);
  for (const name of ["", "10.0.0.5", "a..b", "-a", "a b", "*.example.com", "host:80"]) {
    assert.equal(isHostname(name), false, name);
  }
});
