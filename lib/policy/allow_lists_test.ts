import assert from "node:assert/strict";
import { Forbidden } from "../errors.ts";
import { basePolicy, type KeyRecord } from "../store/records.ts";
import { checkDomain, checkIp, referrerHost } from "./allow_lists.ts";
import { parseAddress } from "./ip_address.ts";

function key(policy: Partial<KeyRecord>): KeyRecord {
  const now = new Date().toISOString();
  return {
    ...basePolicy("m1"),
    id: "key_x",
    digest: "d",
    hint: "gwk_",
    createdAt: now,
    updatedAt: now,
    ...policy,
  };
}

const allowedFrom = (k: KeyRecord, headers: Record<string, string>) => {
  try {
    checkDomain(k, new Headers(headers));
    return true;
  } catch (error) {
    assert.ok(error instanceof Forbidden);
    return false;
  }
};

Deno.test("domain list: exact host, wildcard subdomains, Origin before Referer", () => {
  const k = key({ allowDomains: ["example.com", "*.apps.example.org"] });
  assert.ok(allowedFrom(k, { Origin: "https://example.com" }));
  assert.ok(allowedFrom(k, { Origin: "https://EXAMPLE.com:8443" }), "case and port do not matter");
  assert.ok(!allowedFrom(k, { Origin: "https://www.example.com" }), "a plain entry is that host only");
  assert.ok(!allowedFrom(k, { Origin: "https://example.com.evil.net" }));
  assert.ok(allowedFrom(k, { Origin: "https://a.apps.example.org" }));
  assert.ok(allowedFrom(k, { Origin: "https://x.y.apps.example.org" }));
  assert.ok(!allowedFrom(k, { Origin: "https://apps.example.org" }), "a wildcard is subdomains only");
  assert.ok(!allowedFrom(k, { Origin: "https://evilapps.example.org" }));
  assert.ok(allowedFrom(k, { Referer: "https://example.com/page?q=1" }));
  assert.ok(!allowedFrom(k, { Origin: "https://evil.net", Referer: "https://example.com/" }), "Origin wins");
  assert.ok(
    allowedFrom(k, { Origin: "null", Referer: "https://example.com/" }),
    "an opaque origin says nothing",
  );
  assert.ok(!allowedFrom(k, {}), "neither header");
  assert.ok(allowedFrom(key({}), {}), "no list, no check");
});

Deno.test("referrer hosts are parsed, not pattern-matched", () => {
  assert.equal(referrerHost("https://example.com./x"), "example.com");
  assert.equal(referrerHost("https://user@example.com@evil.net/"), "evil.net");
  assert.equal(referrerHost("not a url"), null);
  assert.equal(referrerHost("https://[2001:db8::1]:443/"), "[2001:db8::1]");
});

Deno.test("IP list: inside passes, outside and unknown are refused with the address seen", () => {
  const k = key({ allowIps: ["10.0.0.0/8", "2001:db8::/32"] });
  checkIp(k, parseAddress("10.9.9.9"));
  checkIp(k, parseAddress("2001:db8::1"));
  assert.throws(() => checkIp(k, parseAddress("11.0.0.1")), /11\.0\.0\.1 are not allowed/);
  assert.throws(() => checkIp(k, null), Forbidden);
  checkIp(key({}), null);
});
