/**
 * @module What a backend adapter is: it sends an internal `ChatRequest` to one server in that server's wire
 * format and returns the internal result, or throws a `GatewayError` whose `retryable` tells failover whether
 * another server may do better.
 */
import type { ChatRequest, ChatResult } from "../chat/types.ts";
import type { ServerRecord } from "../store/records.ts";
import type { EventStream } from "./stream_reading.ts";
import type { Reachability } from "./reachability.ts";
import type { InvalidValueSink } from "./answer_values.ts";
import type { Cut } from "../runtime/request_cut.ts";

export interface CallContext {
  /** Time allowed to open a connection to a server that has not answered lately. */
  connectTimeoutMs: number;
  /** Which servers answered lately; without it no connect check is made. */
  reach?: Reachability;
  /** Time allowed for the backend's response headers (a cold model may need to load first). */
  firstByteTimeoutMs: number;
  /** Time allowed for the whole answer. */
  responseTimeoutMs: number;
  /** Longest silence allowed between two chunks of a streamed answer. */
  idleTimeoutMs: number;
  /** Largest answer read whole, and largest single event of a streamed answer. */
  maxAnswerBytes: number;
  /** Counts the values of backends' answers that were invalid and treated as missing. */
  values?: InvalidValueSink;
  /** Aborts the backend call, e.g. when the client goes away. */
  cut?: Cut;
}

export interface BackendAdapter {
  chat(request: ChatRequest, server: ServerRecord, ctx: CallContext): Promise<ChatResult>;
  /** Resolves once the first event has arrived; failures before then are the server's, so failover applies. */
  stream(request: ChatRequest, server: ServerRecord, ctx: CallContext): Promise<EventStream>;
}
