/**
 * @module The access log (`GATEWAY_ACCESS_LOG=1`): one line per finished request, from its usage record. What
 * a record holds and nothing more: the key's id (never the key), model, server name, client format, status,
 * tokens and latency. Off, nothing is built or called; on, the lines are written together every 100 ms.
 */
import type { UsageRecord } from "../usage/types.ts";
import { log } from "../log/mod.ts";

export function logRequest(record: UsageRecord): void {
  const tokens = record.promptTokens + record.completionTokens;
  log.deferred(
    "info",
    "request",
    `${record.httpStatus} ${record.format} ${record.model ?? "-"} in ${Math.round(record.latencyMs)} ms`,
    {
      at: record.time,
      key: record.keyId,
      user: record.user,
      model: record.model,
      server: record.server,
      format: record.format,
      stream: record.stream,
      status: record.httpStatus,
      outcome: record.status,
      code: record.errorCode,
      promptTokens: record.promptTokens,
      completionTokens: record.completionTokens,
      tokens,
      latencyMs: record.latencyMs,
      ttfbMs: record.ttfbMs,
    },
  );
}
