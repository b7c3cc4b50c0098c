/**
 * Time to first byte of a streamed answer: straight to a fake Ollama vs through the gateway (full pipeline:
 * key lookup, shaping, routing, usage ledger on a store file). In-process, so a relative figure: the proper
 * load test with an external generator is the HTTP bench.
 */
import { createKey } from "../lib/store/keys.ts";
import { basePolicy } from "../lib/store/records.ts";
import { benchGateway, benchStore } from "./support/bench_gateway.ts";

const { kv, fake } = await benchStore();
fake.reply = () => ({ content: "one two three four five six seven eight" });
const { secret } = await createKey(kv, basePolicy("m1"));
const { url } = await benchGateway(kv);

const body = JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }], stream: true });

async function firstByte(url: string, headers: Record<string, string>) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel();
}

Deno.bench("TTFB direct to the backend", { group: "ttfb", baseline: true }, async () => {
  await firstByte(`${fake.url}/api/chat`, {});
});

Deno.bench("TTFB through the gateway (format B)", { group: "ttfb" }, async () => {
  await firstByte(`${url}/v1/chat.php`, { Authorization: `Bearer ${secret}` });
});

Deno.bench("TTFB through the gateway (format A)", { group: "ttfb" }, async () => {
  await firstByte(`${url}/v1/chat/completions`, {
    Authorization: `Bearer ${secret}`,
  });
});
