/**
 * Ollama's other endpoints never reach a backend, and /api/chat behaves as Ollama's own: it streams unless
 * told otherwise and reads its body as JSON whatever the Content-Type, as the curl lines of Ollama's docs do.
 * An Ollama client given the OpenAI base URL is told, in its own error shape, the host to use instead.
 */
import assert from "node:assert/strict";
import { Ollama } from "ollama";
import { Scenario } from "./harness.ts";

Deno.test("/api/pull, /api/delete and the other non-chat endpoints answer an Ollama error and reach no backend", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  const client = new Ollama({ host: s.gw.url, headers: { Authorization: `Bearer ${key}` } });
  const before = new Map(s.fake().hits);

  await assert.rejects(client.pull({ model: "llama3.2:3b" }), (e: Error & { status_code?: number }) => {
    assert.equal(e.status_code, 404);
    assert.match(e.message, /^Model management \(\/api\/pull\) is not available through this gateway/);
    assert.match(e.message, /POST \/api\/chat/);
    return true;
  });
  await assert.rejects(client.delete({ model: "m1" }), /Model management \(\/api\/delete\)/);
  await assert.rejects(client.generate({ model: "m1", prompt: "hi" }), /\/api\/generate is not available/);
  await assert.rejects(client.embed({ model: "m1", input: "hi" }), /\/api\/embed is not available/);
  for (
    const path of [
      "/api/push",
      "/api/create",
      "/api/copy",
      "/api/embeddings",
      "/api/blobs/sha256:0",
    ]
  ) {
    const res = await fetch(`${s.gw.url}${path}`, { method: "POST", body: "{}" });
    assert.equal(res.status, 404, path);
    assert.equal(typeof (await res.json()).error, "string", path);
  }
  assert.deepEqual(s.fake().hits, before, "nothing reached the backend");
  assert.equal(s.fake().received.length, 0);
});

Deno.test("/api/chat streams by default and takes a body without a JSON Content-Type", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "a b" });
  // What `curl $GW/api/chat -H "Authorization: Bearer …" -d '{…}'` sends.
  const res = await fetch(`${s.gw.url}/api/chat`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/x-www-form-urlencoded" },
    body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }] }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /application\/x-ndjson/);
  const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.at(-1).done, true);
  assert.equal(lines.map((l) => l.message.content).join(""), "a b");
  assert.equal(s.fake().last.stream, true);

  const refused = await s.gw.post("/api/chat", "gwk_wrong", { messages: [{ role: "user", content: "hi" }] });
  assert.equal(refused.status, 401);
  assert.deepEqual(Object.keys(await refused.json()).sort(), ["code", "error"]);
});

Deno.test("an Ollama client given the OpenAI base URL is told the host to use, and nothing reaches a backend", async () => {
  await using s = await Scenario.start();
  const key = await s.gw.key();
  s.fake().reply = () => ({ content: "fine" });
  const hits = new Map(s.fake().hits);
  const messages = [{ role: "user", content: "hi" }];

  for (const base of ["/v1", "/api/v1"]) {
    const wrong = new Ollama({ host: `${s.gw.url}${base}`, headers: { Authorization: `Bearer ${key}` } });
    const told = (e: Error & { status_code?: number }) => {
      assert.equal(e.status_code, 404);
      assert.equal(
        e.message,
        `${s.gw.url}${base} is the gateway's OpenAI base URL; an Ollama client takes the gateway's address ` +
          `without ${base}: set its host to ${s.gw.url} (OpenAI clients keep ${s.gw.url}${base}).`,
      );
      return true;
    };
    await assert.rejects(wrong.chat({ model: "m1", messages }), told);
    await assert.rejects(wrong.chat({ model: "m1", messages, stream: true }), told);
    await assert.rejects(wrong.list(), told);
    await assert.rejects(wrong.show({ model: "m1" }), told);
    await assert.rejects(wrong.ps(), told);
    await assert.rejects(wrong.pull({ model: "m1" }), told);
  }
  // Any method, with or without a key, and a raw look at the body: Ollama's shape.
  for (const method of ["GET", "POST", "DELETE"]) {
    const res = await fetch(`${s.gw.url}/v1/api/tags`, { method });
    assert.equal(res.status, 404, method);
    const body = await res.json();
    assert.deepEqual(Object.keys(body).sort(), ["code", "error"]);
    assert.match(body.error, /set its host to http:\/\/127\.0\.0\.1:\d+ /);
  }
  assert.deepEqual(s.fake().hits, hits, "nothing reached the backend");
  assert.equal(s.fake().received.length, 0);

  // What the message says works.
  const right = new Ollama({ host: s.gw.url, headers: { Authorization: `Bearer ${key}` } });
  assert.equal((await right.chat({ model: "m1", messages })).message.content, "fine");
});
