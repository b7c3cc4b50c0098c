/**
 * @module One OpenTelemetry span per chat request, sent through the runtime's own exporter when it is on
 * (`OTEL_DENO`): named and attributed as the GenAI semantic conventions say (`chat {model}`,
 * `gen_ai.request.model`, `gen_ai.usage.input_tokens` and `output_tokens`), with the server that answered, the
 * time the request waited in the queue and its time to the first token. The span is made from the request's
 * usage record once it is taken, with the request's own start and end, so the request path pays nothing for
 * it and nothing at all when tracing is off. No key, prompt or answer is put on it.
 */
import { type Attributes, SpanKind, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";
import type { UsageRecord } from "../usage/types.ts";

export type RequestSpans = (record: UsageRecord, queueMs: number | undefined) => void;

export function requestSpans(tracer: Tracer = trace.getTracer("chat-gateway")): RequestSpans {
  return (record, queueMs) => {
    const start = Date.parse(record.time);
    const model = record.model ?? "unknown";
    const attributes: Attributes = {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": model,
      "gen_ai.usage.input_tokens": record.promptTokens,
      "gen_ai.usage.output_tokens": record.completionTokens,
      "gateway.format": record.format,
      "gateway.stream": record.stream,
      "gateway.outcome": record.status,
      "gateway.token_source": record.tokenSource,
      "http.response.status_code": record.httpStatus,
    };
    if (record.keyId !== undefined) attributes["gateway.key_id"] = record.keyId;
    if (record.server !== undefined) attributes["gateway.server"] = record.server;
    if (queueMs !== undefined) attributes["gateway.queue_wait_ms"] = queueMs;
    if (record.ttfbMs !== undefined) attributes["gen_ai.response.time_to_first_chunk_ms"] = record.ttfbMs;
    if (record.errorCode !== undefined) attributes["error.type"] = record.errorCode;
    const span = tracer.startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, startTime: start, attributes });
    if (record.status === "error" || record.status === "partial") {
      span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorCode });
    }
    span.end(start + record.latencyMs);
  };
}
