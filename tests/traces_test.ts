/**
 * Traces through the runtime's own OpenTelemetry (`OTEL_DENO=true`): a gateway process sends a span per chat
 * request, as the GenAI semantic conventions name and attribute it, to an OTLP receiver (HTTP, JSON) the test
 * starts; a whole and a streamed request each give one, with the tokens the client was billed.
 */
import assert from "node:assert/strict";
import { FakeOllama } from "./fakes/fake_ollama.ts";
import { admin, type GatewayProcess, startGateway } from "./support/processes.ts";
import { eventually } from "./support/wait_for.ts";

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
interface OtlpSpan {
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: OtlpValue }[];
}

/** An OTLP/HTTP receiver of JSON traces: every span it was sent, and every body as it came. */
function otlpReceiver() {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    bodies.push(body);
    if (new URL(req.url).pathname === "/v1/traces") {
      for (const rs of JSON.parse(body).resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans ?? []);
      }
    }
    return Response.json({});
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, spans, bodies, close: () => server.shutdown() };
}

function attributes(span: OtlpSpan): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of span.attributes) {
    out[key] = value.stringValue ?? value.boolValue ?? value.doubleValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue));
  }
  return out;
}

Deno.test("OTEL_DENO: a span per chat request, whole and streamed, with the GenAI attributes and the billed tokens", async () => {
  const receiver = otlpReceiver();
  const fake = FakeOllama.start("gpu1");
  const dir = await Deno.makeTempDir();
  let gateway: GatewayProcess | undefined;
  try {
    const env = { GATEWAY_KV: `${dir}/store.kv` };
    await admin(env, "server", "add", "--name", "gpu1", "--url", fake.url, "--model", "m1");
    const { key } = await admin(env, "key", "create", "--model", "m1");
    gateway = await startGateway({
      ...env,
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "chat-gateway-test",
    });
    const ask = (stream: boolean) =>
      fetch(`${gateway!.url}/v1/chat/completions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          model: "any",
          messages: [{ role: "user", content: "hello" }],
          stream,
          ...(stream ? { stream_options: { include_usage: true } } : {}),
        }),
      });
    const whole = await (await ask(false)).json();
    const streamed = await (await ask(true)).text();
    const streamedUsage = streamed.split("\n").filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6))).find((chunk) => chunk.usage)?.usage;
    assert.ok(whole.usage && streamedUsage, "both answers carry their usage");

    const chats = await eventually(
      "two chat spans",
      () =>
        receiver.spans.filter((s) => s.name.startsWith("chat ")).length >= 2 &&
        receiver.spans.filter((s) => s.name.startsWith("chat ")),
    );
    assert.equal(chats.length, 2);
    const byStream = new Map(chats.map((s) => [attributes(s)["gateway.stream"], s]));
    for (const [stream, usage] of [[false, whole.usage], [true, streamedUsage]] as const) {
      const span = byStream.get(stream)!;
      const a = attributes(span);
      assert.equal(span.name, "chat m1");
      assert.equal(span.kind, 3, "SPAN_KIND_CLIENT");
      assert.equal(a["gen_ai.operation.name"], "chat");
      assert.equal(a["gen_ai.request.model"], "m1");
      assert.equal(a["gen_ai.usage.input_tokens"], usage.prompt_tokens);
      assert.equal(a["gen_ai.usage.output_tokens"], usage.completion_tokens);
      assert.equal(a["gateway.server"], "gpu1");
      assert.equal(a["gateway.queue_wait_ms"], 0);
      assert.equal(a["gateway.outcome"], "ok");
      assert.equal(a["http.response.status_code"], 200);
      assert.ok(BigInt(span.endTimeUnixNano) > BigInt(span.startTimeUnixNano), "the request's own duration");
      if (stream) assert.equal(typeof a["gen_ai.response.time_to_first_chunk_ms"], "number");
    }
    assert.ok(!receiver.bodies.some((b) => b.includes(key)), "no key in any span or log");
  } finally {
    await gateway?.stop();
    await fake.close();
    await receiver.close();
    await Deno.remove(dir, { recursive: true });
  }
});
