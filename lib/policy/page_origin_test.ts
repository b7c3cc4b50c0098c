import assert from "node:assert/strict";
import type { KeyRecord } from "../store/records.ts";
import { pageMayRead } from "./page_origin.ts";

const keyFor = (allowDomains: string[]) => ({ allowDomains, allowIps: [] }) as unknown as KeyRecord;

Deno.test("a key's domain list alone decides which pages read its answers", () => {
  const key = keyFor(["app.example.com", "*.example.org"]);
  assert.equal(pageMayRead("https://app.example.com", key, []), true);
  assert.equal(pageMayRead("https://a.example.org", key, []), true);
  assert.equal(pageMayRead("https://other.example", key, ["*"]), false);
  assert.equal(pageMayRead("null", key, ["*"]), false);
});

Deno.test("without a domain list, or without a valid key, the admin's origins decide", () => {
  for (const key of [keyFor([]), null]) {
    assert.equal(pageMayRead("https://listed.example", key, ["https://listed.example"]), true);
    assert.equal(pageMayRead("https://other.example", key, ["https://listed.example"]), false);
    assert.equal(pageMayRead("https://any.example", key, ["*"]), true);
    assert.equal(pageMayRead("null", key, ["*"]), false);
    assert.equal(pageMayRead("https://any.example", key, []), false);
  }
});
