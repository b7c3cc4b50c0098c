import assert from "node:assert/strict";
import { revokeKey } from "../lib/store/keys.ts";
import { Scenario, USER_HELLO } from "./harness.ts";

const A = "/v1/chat/completions";
const B = "/v1/chat.php";

async function expectError(res: Response, status: number, code: string, face: "A" | "B") {
  assert.equal(res.status, status);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = await res.json();
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, "string");
  if (face === "B") assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "type"]);
  if (face === "B") assert.equal(body.error.type, "proxy_error");
  else assert.equal(body.error.param, null);
  return body.error.message as string;
}

Deno.test("401 for a missing, malformed or unknown key, in both formats", async () => {
  await using s = await Scenario.start();
  for (const [path, face] of [[A, "A"], [B, "B"]] as const) {
    await expectError(
      await s.gw.post(path, undefined, { messages: USER_HELLO }),
      401,
      "invalid_api_key",
      face,
    );
    await expectError(
      await s.gw.post(path, "gwk_nope", { messages: USER_HELLO }),
      401,
      "invalid_api_key",
      face,
    );
    const basic = await s.gw.post(path, undefined, { messages: USER_HELLO }, { Authorization: "Basic abc" });
    await expectError(basic, 401, "invalid_api_key", face);
  }
  const typeA = (await (await s.gw.post(A, undefined, { messages: USER_HELLO })).json()).error.type;
  assert.equal(typeA, "authentication_error");
  assert.equal(s.fake().chats.length, 0);
});

Deno.test("403 once a key has expired; a revoked key is unknown (401)", async () => {
  let now = Date.parse("2026-11-22T10:00:00Z");
  await using s = await Scenario.start(undefined, { now: () => now });
  const key = await s.gw.key({ expiresAt: "2026-11-22T11:00:00.000Z" });
  assert.equal((await s.gw.post(A, key, { messages: USER_HELLO })).status, 200);
  now = Date.parse("2026-11-22T11:00:00Z");
  const msg = await expectError(await s.gw.post(A, key, { messages: USER_HELLO }), 403, "key_expired", "A");
  assert.match(msg, /expired/);
  await expectError(await s.gw.post(B, key, { messages: USER_HELLO }), 403, "key_expired", "B");

  const other = await s.gw.key();
  const [record] =
    (await Array.fromAsync(s.gw.kv.list<{ id: string; expiresAt?: string }>({ prefix: ["keys"] })))
      .filter((e) => !e.value.expiresAt);
  await revokeKey(s.gw.kv, record.value.id);
  await s.gw.deps.view.refresh();
  await expectError(await s.gw.post(A, other, { messages: USER_HELLO }), 401, "invalid_api_key", "A");
});

Deno.test("400 names the field that is wrong", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  const cases: [unknown, RegExp][] = [
    ["{not json", /invalid JSON/],
    ["[1,2]", /must be a JSON object/],
    [{}, /"messages" must be an array/],
    [{ messages: [] }, /"messages" must be a non-empty array/],
    [{ messages: [{ role: "wizard", content: "x" }] }, /"messages\[0\]\.role" must be one of/],
    [{ messages: [{ role: "user", content: 5 }] }, /"messages\[0\]\.content"/],
    [{ messages: [{ role: "user" }] }, /"messages\[0\]\.content" is required/],
    [{ messages: USER_HELLO, temperature: "hot" }, /"temperature" must be a number/],
    [{ messages: USER_HELLO, stream: "yes" }, /"stream" must be a boolean/],
    [{ messages: USER_HELLO, options: { num_ctx: -4 } }, /"options\.num_ctx"/],
    [{ messages: USER_HELLO, reasoning_effort: "extreme" }, /"reasoning_effort" must be one of/],
    [{ messages: USER_HELLO, keep_alive: "forever" }, /"keep_alive"/],
    [
      { messages: [{ role: "assistant", tool_calls: [{ function: { name: "f", arguments: "{bad" } }] }] },
      /"messages\[0\]\.tool_calls\[0\]\.function\.arguments" is not valid JSON/,
    ],
    [
      {
        messages: [{
          role: "user",
          content: [{ type: "image_url", image_url: { url: "data:text/plain;base64,aGk=" } }],
        }],
      },
      /must be an image, got text\/plain/,
    ],
    [
      { messages: [{ role: "user", content: "x", images: ["***"] }] },
      /"messages\[0\]\.images\[0\]" is not valid base64/,
    ],
  ];
  for (const [body, pattern] of cases) {
    for (const [path, face] of [[A, "A"], [B, "B"]] as const) {
      const msg = await expectError(await s.gw.post(path, key, body), 400, "invalid_request", face);
      assert.match(msg, pattern, `${JSON.stringify(body)} → ${msg}`);
      assert.match(msg, /^Cannot parse request: /);
    }
  }
  assert.equal(s.fake().chats.length, 0);
});

Deno.test("415 without a JSON content type; 413 over the size limit", async () => {
  await using s = await Scenario.start(undefined, { config: { maxBodyBytes: 1000 } });
  const key = await s.gw.key();
  const text = await s.gw.post(A, key, JSON.stringify({ messages: USER_HELLO }), {
    "Content-Type": "text/plain",
  });
  await expectError(text, 415, "unsupported_media_type", "A");
  const big = { messages: [{ role: "user", content: "x".repeat(2000) }] };
  await expectError(await s.gw.post(B, key, big), 413, "payload_too_large", "B");
  // Without a Content-Length the limit still holds while reading.
  const chunked = await fetch(`${s.gw.url}${A}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: new Blob([JSON.stringify(big)]).stream(),
  });
  await expectError(chunked, 413, "payload_too_large", "A");
});
