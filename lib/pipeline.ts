/**
 * @module The chat pipeline: every chat request, whichever path and face, runs these stages in this order.
 * The stages decide; this file only sequences them.
 */
import { authenticate } from "./auth/mod.ts";
import type { Client } from "./http/client.ts";
import { readJsonBody, releaseBody } from "./http/read_body.ts";
import { errorResponse, jsonResponse } from "./http/respond.ts";
import { openStreams, streamResponse } from "./http/stream_response.ts";
import { fitToServer, shapeForKey } from "./shape/mod.ts";
import {
  type Candidate,
  dispatch,
  outcomeOf,
  routableCandidates,
  type Route,
  type RouteReason,
  tenantOf,
} from "./routing/mod.ts";
import { type BackendAdapter, BACKENDS, type CallContext } from "./backends/mod.ts";
import { RequestAccount } from "./account/mod.ts";
import { asGatewayError, ClientClosed, GatewayError } from "./errors.ts";
import { withSlotBack } from "./limit_errors.ts";
import type { ChatRequest } from "./chat/types.ts";
import type { KeyRecord } from "./store/records.ts";
import type { Face } from "./faces/mod.ts";
import type { Deps } from "./deps.ts";
import { isPending } from "./runtime/sync_or_promise.ts";
import type { Cut } from "./runtime/request_cut.ts";

function callContext(deps: Deps, cut: Cut): CallContext {
  const { connectTimeoutMs, firstByteTimeoutMs, responseTimeoutMs, idleTimeoutMs, maxAnswerBytes } =
    deps.config;
  return {
    reach: deps.reach,
    connectTimeoutMs,
    firstByteTimeoutMs,
    responseTimeoutMs,
    idleTimeoutMs,
    maxAnswerBytes,
    values: deps.metrics,
    cut,
  };
}

/**
 * Request ids: a random prefix per process, then a count. Unique across processes and restarts like a UUID
 * each, without making and formatting one per request.
 */
const ID_PREFIX = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
let requestCount = 0;

function requestId(): string {
  return ID_PREFIX + (++requestCount).toString(36);
}

const aliasOf = (c: Candidate) => c.model.alias ?? c.model.tag;

/** What the answer tells of its route: why that server (`X-Gateway-Route`), and the wait for it, if any. */
function routeHeaders(reason: RouteReason, waitedMs: number): Record<string, string> {
  const headers: Record<string, string> = { "X-Gateway-Route": reason };
  if (waitedMs > 0) headers["X-Gateway-Queue-Ms"] = String(Math.round(waitedMs));
  return headers;
}

/** One accepted request on its way to a backend. */
interface Turn {
  face: Face;
  shaped: ChatRequest;
  key: KeyRecord;
  candidates: Candidate[];
  route: Route;
  /** The route's headers, once a server answered. */
  routed: Record<string, string>;
  ctx: CallContext;
  account: RequestAccount;
  deps: Deps;
  /** The policy's headers (rate-limit state). */
  admitted: Record<string, string>;
}

export async function runChat(
  face: Face,
  request: Request,
  client: Client,
  deps: Deps,
): Promise<Response> {
  const account = new RequestAccount(deps.usage, face.name, deps.now(), deps.metrics);
  let admitted: Record<string, string> = {};
  try {
    // Both stages answer at once from what the process holds; only a store read makes them wait.
    const found = authenticate(request.headers, deps.view, client.secrets);
    const key = client.key = account.key = isPending(found) ? await found : found;
    const policy = deps.policy.admit(
      key,
      { headers: request.headers, peer: client.address },
      account.startedAt,
    );
    admitted = isPending(policy) ? await policy : policy;
    const shaped = shapeForKey(face.parse(await readJsonBody(request, deps.config, true)), key);
    account.noteRequest(shaped);
    // What the request can cost is held against the quotas, and settled by its account however it ends.
    const held = deps.policy.reserve(key, shaped, account.startedAt);
    // A refusal here gave the rate-limit slot back: the answer's headers say so.
    account.hold = isPending(held)
      ? await held.catch((refusal) => {
        admitted = withSlotBack(admitted);
        throw refusal;
      })
      : held;
    const placed = deps.scheduler.place(
      key.model,
      routableCandidates(deps.view.snapshot, key, deps.servers),
      shaped.messages,
      key.priority,
      client.cut,
      tenantOf(key),
    );
    const route = isPending(placed) ? await placed : placed;
    const ctx = callContext(deps, client.cut);
    const turn = {
      face,
      shaped,
      key,
      candidates: route.candidates,
      route,
      routed: {},
      ctx,
      account,
      deps,
      admitted,
    };
    return await (shaped.stream ? streamed(turn) : whole(turn));
  } catch (error) {
    // Authentication is the first stage: a request failing with no key noted found none (CORS reads that).
    client.key ??= null;
    // Whatever a read or a call threw when its client left (an AbortError, a cut body) means just that.
    const failure = client.cut.aborted && !(error instanceof GatewayError)
      ? new ClientClosed()
      : asGatewayError(error);
    account.failed(failure);
    // The policy's headers (rate-limit state) go on failures too; a refusal by the policy has none yet.
    return errorResponse(face, failure, admitted);
  } finally {
    // A large body counts against the gateway's body memory until its request is answered or streaming.
    releaseBody(request);
  }
}

/** Failover over the turn's candidates, each receiving the request fitted to it; notes who answered. */
async function dispatchTo<T>(
  t: Turn,
  call: (backend: BackendAdapter, request: ChatRequest, c: Candidate) => Promise<T>,
) {
  const attempt = await dispatch(
    t.key.model,
    t.candidates,
    t.deps.servers,
    (c) => call(BACKENDS[c.server.kind], fitToServer(t.shaped, t.key, c.server, c.model.tag), c),
  );
  t.account.server = attempt.candidate.server.name;
  const waitedMs = t.route.waitedMs;
  t.routed = routeHeaders(t.route.served(attempt.candidate), waitedMs);
  t.account.queueMs = waitedMs > 0 ? Math.round(waitedMs) : 0;
  return attempt;
}

async function whole(t: Turn): Promise<Response> {
  const startedTick = performance.now();
  const { value: result, candidate, ticket } = await dispatchTo(
    t,
    (b, req, c) => b.chat(req, c.server, t.ctx),
  );
  t.deps.servers.finish(ticket, "ok");
  t.account.completed(result);
  const body = t.face.renderResult(result, {
    requestId: requestId(),
    startedAt: t.account.startedAt,
    finishedAt: t.deps.now(),
    durationNs: Math.max(1, Math.round((performance.now() - startedTick) * 1e6)),
    alias: aliasOf(candidate),
    request: t.shaped,
  });
  // The route's and the policy's headers are given as the response is built: set on a built one, each costs.
  return jsonResponse(body, 200, t.routed, t.admitted);
}

async function streamed(t: Turn): Promise<Response> {
  const startedTick = performance.now();
  const { value: stream, candidate, ticket } = await dispatchTo(
    t,
    (b, req, c) => b.stream(req, c.server, t.ctx),
  );
  t.deps.servers.answered(ticket);
  const renderer = t.face.streamRenderer({
    requestId: requestId(),
    startedAt: t.account.startedAt,
    model: stream.model,
    alias: aliasOf(candidate),
    includeUsage: t.shaped.includeUsage,
    request: t.shaped,
    now: t.deps.now,
    elapsedNs: () => (performance.now() - startedTick) * 1e6,
  });
  return streamResponse(
    renderer,
    stream,
    (end) => {
      // A client that left says nothing about the server; a break the backend caused does.
      t.deps.servers.finish(
        ticket,
        end.done ? "ok" : end.clientLeft || !end.error ? "excused" : outcomeOf(end.error),
      );
      t.account.streamEnded(end);
    },
    t.deps.streams ?? openStreams,
    t.deps.config.clientStallTimeoutMs,
    t.routed,
    t.admitted,
  );
}
