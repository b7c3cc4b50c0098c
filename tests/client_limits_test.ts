import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";
import { CHAT_PATHS, readFaceError } from "./support/hostile_faces.ts";

Deno.test("num_predict -5 gets a 400 naming the field on all six chat paths, and never reaches a server", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  for (const { path, face } of CHAT_PATHS) {
    for (const body of [{ num_predict: -5 }, { options: { num_predict: -5 } }]) {
      const where = `${path} ${JSON.stringify(body)}`;
      const res = await s.gw.post(path, key, { model: "any", messages: USER_HELLO, ...body });
      const refusal = await readFaceError(res, face, where);
      assert.equal(refusal.status, 400, where);
      const field = "options" in body ? '"options.num_predict"' : '"num_predict"';
      assert.ok(refusal.message.includes(field), `${where}: ${refusal.message}`);
      assert.match(refusal.message, /-1 \(no limit\) or -2 \(fill the context\)/, where);
    }
  }
  assert.equal(s.fake().chats.length, 0);
});

Deno.test("token limits a backend cannot honour are refused with the field named; -1 and -2 still pass", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  const refused: [Record<string, unknown>, string][] = [
    [{ num_predict: -3 }, "num_predict"],
    [{ num_predict: 0 }, "num_predict"],
    [{ num_predict: 2 ** 31 }, "num_predict"],
    [{ options: { num_ctx: -1 } }, "options.num_ctx"],
    [{ options: { num_ctx: 2048.5 } }, "options.num_ctx"],
    [{ num_ctx: 2 ** 31 }, "num_ctx"],
    [{ max_tokens: 2 ** 40 }, "max_tokens"],
    [{ max_completion_tokens: -5 }, "max_completion_tokens"],
  ];
  for (const { path, face } of [CHAT_PATHS[0], CHAT_PATHS[4]]) {
    for (const [extra, field] of refused) {
      const where = `${path} ${JSON.stringify(extra)}`;
      const res = await s.gw.post(path, key, { messages: USER_HELLO, ...extra });
      const refusal = await readFaceError(res, face, where);
      assert.equal(refusal.status, 400, where);
      assert.ok(refusal.message.includes(`"${field}"`), `${where}: ${refusal.message}`);
    }
    for (const n of [-1, -2, 1, 2 ** 31 - 1]) {
      const res = await s.gw.post(path, key, { messages: USER_HELLO, options: { num_predict: n } });
      const text = await res.text();
      assert.equal(res.status, 200, `${path} num_predict ${n}: ${text}`);
      assert.equal((s.fake().last.options as Record<string, unknown>).num_predict, n);
    }
  }
});
