/**
 * A key with `--force-json` promises its clients a JSON object. A client's own response schema stands only if
 * it describes one; any other top-level type is a 400 in the client's format, and no server is called.
 */
import assert from "node:assert/strict";
import { Scenario, USER_HELLO } from "./harness.ts";

type Json = Record<string, unknown>;

const NOT_OBJECTS: (Json)[] = [
  { type: "string" },
  { type: "array", items: { type: "object" } },
  { type: "integer" },
  { type: ["object", "null"] },
  { properties: { ok: { type: "boolean" } } },
  { anyOf: [{ type: "object" }, { type: "string" }] },
];

/** The schema as each format carries it. */
const CARRIERS: [string, (schema: Json) => Json][] = [
  ["/v1/chat/completions", (schema) => ({
    messages: USER_HELLO,
    response_format: { type: "json_schema", json_schema: { name: "x", schema } },
  })],
  ["/v1/messages", (schema) => ({
    max_tokens: 100,
    messages: USER_HELLO,
    output_config: { format: { type: "json_schema", schema } },
  })],
  ["/api/chat", (schema) => ({ messages: USER_HELLO, format: schema })],
  [
    "/v1/responses",
    (schema) => ({ input: "hello there", text: { format: { type: "json_schema", name: "x", schema } } }),
  ],
];

Deno.test("force-JSON: a client's schema whose top level is not an object is refused with a clear 400", async () => {
  await using s = await Scenario.start();
  const forced = await s.gw.key({ forceJson: true });
  for (const [path, carry] of CARRIERS) {
    for (const schema of NOT_OBJECTS) {
      for (const stream of [false, true]) {
        const res = await s.gw.post(path, forced, { model: "m", ...carry(schema), stream });
        const body = await res.json();
        assert.equal(res.status, 400, `${path} ${JSON.stringify(schema)}`);
        assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
        // Each in its format: Ollama's own path a bare message, Anthropic's a type, the others a code.
        const message = typeof body.error === "string" ? body.error : body.error.message;
        if (typeof body.error !== "string") {
          assert.match(body.error.code ?? body.error.type, /^invalid_request(_error)?$/, path);
        }
        assert.match(message, /JSON objects: a response schema must have "type": "object"/, path);
      }
    }
  }
  assert.equal(s.fake().chats.length, 0, "no server was asked");
});

Deno.test("force-JSON: an object schema stands; without force-JSON any schema passes as before", async () => {
  await using s = await Scenario.start();
  const forced = await s.gw.key({ forceJson: true });
  const plain = await s.gw.key();
  const object = { type: "object", properties: { ok: { type: "boolean" } } };
  for (const [path, carry] of CARRIERS) {
    for (const [key, schema] of [[forced, object], [plain, { type: "string" }], [plain, object]] as const) {
      const res = await s.gw.post(path, key, { model: "m", ...carry(schema) });
      assert.equal(res.status, 200, `${path} ${JSON.stringify(schema)}`);
      await res.body?.cancel();
      assert.deepEqual((s.fake().last as Json).format, schema, path);
    }
  }
});
