/** @module Allow-list validation and the canonical spelling entries are stored in. */
import assert from "node:assert/strict";
import { allowDomain, allowIp, allowList } from "./net_rules.ts";
import { UsageError } from "./flags.ts";

Deno.test("allowIp normalizes addresses and ranges", () => {
  assert.equal(allowIp("192.168.1.7"), "192.168.1.7");
  assert.equal(allowIp("10.1.2.3/8"), "10.0.0.0/8");
  assert.equal(allowIp("0.0.0.0/0"), "0.0.0.0/0");
  assert.equal(allowIp("2001:DB8:0:0::1"), "2001:db8::1");
  assert.equal(allowIp("2001:db8::1/32"), "2001:db8::/32");
  assert.equal(allowIp("::/0"), "::/0");
});

Deno.test("allowIp rejects what is not an address or CIDR", () => {
  for (
    const bad of [
      "",
      "10.1",
      "0x0a.0.0.1",
      "256.0.0.1",
      "10.0.0.0/33",
      "::1/129",
      "10.0.0.0/",
      "10.0.0.0/8/8",
    ]
  ) {
    assert.throws(() => allowIp(bad), UsageError, bad);
  }
  for (const bad of ["10.0.0.0/-1", "example.com", "fe80::1%eth0", "10.0.0.0/8x"]) {
    assert.throws(() => allowIp(bad), UsageError, bad);
  }
});

Deno.test("allowDomain takes a host or a *. wildcard, lower-cased", () => {
  assert.equal(allowDomain("Example.COM"), "example.com");
  assert.equal(allowDomain("*.example.com"), "*.example.com");
  assert.equal(allowDomain("localhost"), "localhost");
  assert.equal(allowDomain("xn--bcher-kva.example"), "xn--bcher-kva.example");
  assert.equal(allowDomain("LocalHost:3000"), "localhost:3000", "a port that is not the default");
  assert.equal(allowDomain("*.apps.example.com:8443"), "*.apps.example.com:8443");
  const bad = ["*", "*.", "", "https://example.com", "example.com:443", "example.com/x", "a.*.example.com"];
  bad.push("example.com:80", "example.com:0", "example.com:65536", "example.com:1:2", "example.com:x");
  // Patterns over a whole public suffix let in anyone's site.
  bad.push("*.com", "*.co.uk", "*.github.io", "*.com:8080");
  for (const raw of [...bad, "*example.com", "-a.example", "a..b", "example.com.", "bücher.example", "a b"]) {
    assert.throws(() => allowDomain(raw), UsageError, raw);
  }
});

Deno.test("allowList drops repeats after normalizing", () => {
  assert.deepEqual(allowList(["A.example", "a.example", "b.example"], allowDomain), [
    "a.example",
    "b.example",
  ]);
});
