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
  assert.ok(allowedFrom(k, { Origin: "https://EXAMPLE.com" }), "case does not matter");
  assert.ok(allowedFrom(k, { Origin: "http://example.com:80" }), "the default port is the site");
  assert.ok(!allowedFrom(k, { Origin: "https://example.com:8443" }), "another port is another site");
  assert.ok(!allowedFrom(k, { Origin: "file://example.com" }), "only web pages have a site");
  assert.ok(!allowedFrom(k, { Origin: "chrome-extension://example.com" }));
  const ported = key({ allowDomains: ["localhost:3000", "*.dev.example.com:8443"] });
  assert.ok(allowedFrom(ported, { Origin: "http://localhost:3000" }));
  assert.ok(!allowedFrom(ported, { Origin: "http://localhost" }));
  assert.ok(allowedFrom(ported, { Origin: "https://a.dev.example.com:8443" }));
  assert.ok(!allowedFrom(ported, { Origin: "https://a.dev.example.com" }));
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
  assert.equal(referrerHost("http://example.com:8080/x"), "example.com:8080");
  assert.equal(referrerHost("file://example.com/x"), null);
});

Deno.test("IP list: inside passes, outside and unknown are refused with the address seen", () => {
  const k = key({ allowIps: ["10.0.0.0/8", "2001:db8::/32"] });
  checkIp(k, parseAddress("10.9.9.9"));
  checkIp(k, parseAddress("2001:db8::1"));
  assert.throws(() => checkIp(k, parseAddress("11.0.0.1")), /11\.0\.0\.1 are not allowed/);
  assert.throws(() => checkIp(k, null), Forbidden);
  checkIp(key({}), null);
});
