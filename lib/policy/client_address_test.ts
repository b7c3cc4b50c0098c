import assert from "node:assert/strict";
import { clientAddress } from "./client_address.ts";
import { parseRange, RangeList } from "./ip_address.ts";

const none = RangeList.strict([]);
const proxies = RangeList.strict(["10.0.0.0/8", "fd00::/8"]);
const ip = (peer: string | undefined, xff: string | null, trusted = proxies) =>
  clientAddress(peer, xff, trusted)?.toString() ?? null;

Deno.test("without trusted proxies the peer is the client, whatever X-Forwarded-For says", () => {
  assert.equal(ip("203.0.113.7", "198.51.100.1", none), "203.0.113.7");
  assert.equal(ip("::ffff:203.0.113.7", null, none), "203.0.113.7", "IPv4-mapped peers read as IPv4");
  assert.equal(ip(undefined, "198.51.100.1", none), null);
});

Deno.test("X-Forwarded-For is read from the right, past trusted proxies only", () => {
  assert.equal(ip("10.0.0.1", "198.51.100.1"), "198.51.100.1");
  assert.equal(
    ip("10.0.0.1", "1.1.1.1, 198.51.100.1, 10.2.3.4"),
    "198.51.100.1",
    "spoofed left part ignored",
  );
  assert.equal(ip("10.0.0.1", "2001:db8::5, fd00::1"), "2001:db8::5");
  assert.equal(ip("10.0.0.1", "[2001:db8::5]:443"), "2001:db8::5");
  assert.equal(ip("10.0.0.1", "198.51.100.1:5000"), "198.51.100.1");
  assert.equal(ip("10.0.0.1", "10.0.0.2, 10.0.0.3"), "10.0.0.2", "all proxies: the farthest one");
  assert.equal(ip("10.0.0.1", "nonsense"), null, "a trusted proxy forwarding junk leaves the client unknown");
  assert.equal(ip("10.0.0.1", null), "10.0.0.1");
});

Deno.test("an untrusted peer cannot choose its address with the header", () => {
  assert.equal(ip("203.0.113.7", "10.0.0.5"), "203.0.113.7");
});

Deno.test("ranges: CIDR, single addresses, IPv6 and IPv4-mapped forms", () => {
  const list = RangeList.strict(["192.168.1.0/24", "2001:db8::/32", "::ffff:172.16.0.0/108", "8.8.8.8"]);
  const has = (text: string) => list.has(parseRange(text)![0]);
  assert.ok(has("192.168.1.200"));
  assert.ok(!has("192.168.2.1"));
  assert.ok(has("2001:db8:ffff::1"));
  assert.ok(!has("2001:db9::1"));
  assert.ok(has("172.16.3.4"), "mapped range matches plain IPv4");
  assert.ok(has("8.8.8.8") && !has("8.8.8.9"));
  assert.throws(() => RangeList.strict(["10.0.0.0/33"]));
  assert.equal(RangeList.lenient(["bogus", "10.0.0.0/8"]).size, 1);
});
