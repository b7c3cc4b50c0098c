import assert from "node:assert/strict";
import { TestGateway, USER_HELLO } from "./harness.ts";
import { FakeOllama } from "./fakes/fake_ollama.ts";

Deno.test("smoke: both formats answer through a fake Ollama", async () => {
  const fake = FakeOllama.start("a");
  const gw = await TestGateway.start();
  try {
    await gw.addServer({ name: "a", url: fake.url, models: [{ tag: "m1", alias: "model-one" }] });
    const key = await gw.key();
    const a = await gw.post("/v1/chat/completions", key, { model: "x", messages: USER_HELLO });
    const aBody = await a.json();
    console.log(a.status, aBody);
    const b = await gw.post("/v1/chat.php", key, { model: "x", messages: USER_HELLO });
    console.log(b.status, await b.json());
    assert.equal(a.status, 200);
  } finally {
    await gw.close();
    await fake.close();
  }
});
