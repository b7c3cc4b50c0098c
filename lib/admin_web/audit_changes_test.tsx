import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { actorLabel, ChangeList, valueText } from "./audit_changes.tsx";

const text = (html: string) => html.replace(/<[^>]+>/g, "").replaceAll("&gt;", ">");

Deno.test("audit changes read as field: old → new, in words, without JSON", () => {
  const html = renderToString(
    <ChangeList
      changes={{
        dailyTokens: { before: 40, after: 100 },
        allowIps: { before: [], after: ["10.0.0.0/8", "192.168.1.7"] },
        tools: { before: true, after: false },
        models: { before: [{ tag: "llama3" }], after: [{ tag: "llama3", alias: "chat" }] },
        expiresAt: { after: "2026-12-31T00:00:00.000Z" },
        name: { before: "old name" },
      }}
    />,
  );
  assert.deepEqual(
    [...html.matchAll(/<li[^>]*>(.*?)<\/li>/g)].map((m) => text(m[1])),
    [
      "daily tokens: 40 → 100",
      "allowed IPs: none → 10.0.0.0/8, 192.168.1.7",
      "tools: on → off",
      "models: llama3 → llama3=chat",
      "expires: – → 2026-12-31 00:00:00 UTC",
      "name: old name → –",
    ],
  );
  assert.doesNotMatch(text(html), /[{}[\]"]/, "no JSON");
  assert.equal(valueText({ tag: "m1" }), "m1");
});

Deno.test("the actor is named in words", () => {
  assert.equal(actorLabel({ kind: "cli" }), "Command line");
  assert.equal(
    actorLabel({ kind: "page", session: "1a2b3c4d", address: "127.0.0.1" }),
    "Admin page, session 1a2b3c4d from 127.0.0.1",
  );
  assert.equal(actorLabel({ kind: "api", address: "10.1.2.3" }), "Admin API from 10.1.2.3");
});
