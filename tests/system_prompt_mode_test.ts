/**
 * `--system-prompt-mode replace`: the key's system prompt is the only system message the model gets, whatever
 * the client sends as system text in any format. The default (prepend) keeps the client's after the key's.
 */
import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";

type Json = Record<string, unknown>;

const KEY_PROMPT = "Answer in French.";

/** One request per format, each carrying the client's own system text the way that format does. */
const ASKS: [string, Json][] = [
  ["/v1/chat/completions", {
    messages: [
      { role: "system", content: "Be terse." },
      { role: "developer", content: "No emoji." },
      ...USER_HELLO,
    ],
  }],
  ["/api/chat", { messages: [{ role: "system", content: "Be terse." }, ...USER_HELLO] }],
  ["/v1/messages", { max_tokens: 100, system: "Be terse.", messages: USER_HELLO }],
  ["/v1/responses", { instructions: "Be terse.", input: "hello there" }],
];

function sentMessages(s: Scenario): [string, string][] {
  return ((s.fake().last as Json).messages as { role: string; content: string }[]).map((
    m,
  ) => [m.role, m.content]);
}

Deno.test("replace: the client's system messages are removed and the key's alone is sent, in every format", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ systemPrompt: KEY_PROMPT, systemPromptMode: "replace" });
  for (const [path, body] of ASKS) {
    for (const stream of [false, true]) {
      const res = await s.gw.post(path, key, { model: "m", ...body, stream });
      assert.equal(res.status, 200, path);
      await res.body?.cancel();
      assert.deepEqual(
        sentMessages(s),
        [["system", KEY_PROMPT], ["user", "hello there"]],
        `${path} ${stream}`,
      );
    }
  }
});

Deno.test("prepend, the default: the client's system messages follow the key's", async () => {
  await using s = await Scenario.start();
  for (
    const policy of [{ systemPrompt: KEY_PROMPT }, {
      systemPrompt: KEY_PROMPT,
      systemPromptMode: "prepend" as const,
    }]
  ) {
    const key = await s.gw.key(policy);
    const res = await s.gw.post("/api/chat", key, { model: "m", ...ASKS[1][1], stream: false });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.deepEqual(sentMessages(s), [["system", KEY_PROMPT], ["system", "Be terse."], [
      "user",
      "hello there",
    ]]);
  }
});

Deno.test("replace without a system prompt of the key's changes nothing: there is nothing to replace with", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key({ systemPromptMode: "replace" });
  const res = await s.gw.post("/api/chat", key, { model: "m", ...ASKS[1][1], stream: false });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.deepEqual(sentMessages(s), [["system", "Be terse."], ["user", "hello there"]]);
});
