/**
 * @module The faces' rows: the one gateway asked the same one-line question through OpenAI's chat
 * completions, OpenAI's Responses API and Anthropic's Messages API, with the backend called directly as the
 * reference, in the same rounds (order rotating). Each new face is held to chat completions' figures: its
 * added p50 at 1 connection (its p50 minus the direct one's) at most 10 % above chat completions', its
 * throughput at full concurrency at least 90 % of it; both ratios are taken within a round, then the median.
 */
import type { LoadTool } from "./load.ts";
import { startBenchGateway } from "./gateway_setup.ts";
import { type Child, spawnDeno } from "./spawn.ts";
import { gatewayTarget, ollamaTarget } from "./targets.ts";
import { loadInRounds, type LoadTarget, perRound, type RoundRun, smokeTest } from "./rounds.ts";
import { median } from "./streaming.ts";
import { count, pct, type Row, times, us } from "./report.ts";

const FACES = ["responses", "messages"] as const;
type Face = typeof FACES[number];
type Target = "direct" | "chat" | Face;

/** Within this fraction of chat completions' figure, on the side that matters. */
const SPREAD = 0.1;

export interface FacesFigures {
  rounds: number;
  secondsPerRun: number;
  connections: number;
  /** p50 at 1 connection, µs, and what the gateway adds to the direct call (median of each round's). */
  p50Us: Record<Target, number>;
  addedP50Us: Record<Exclude<Target, "direct">, number>;
  requestsPerSec: Record<Target, number>;
  /** CPU time of the target's own process per request at full concurrency (direct: the backend's). */
  cpuUsPerRequest: Record<Target, number>;
  /** Each face's figure ÷ chat completions', within a round, then the median; and round by round. */
  toChat: Record<Face, {
    addedP50: number;
    requestsPerSec: number;
    cpuUsPerRequest: number;
    rounds: { addedP50: number[]; requestsPerSec: number[] };
  }>;
}

const JSON_TYPE = { "Content-Type": "application/json" };
const messages = [{ role: "user", content: "hi" }];

function faceTargets(gatewayUrl: string, secret: string) {
  const auth = { ...JSON_TYPE, Authorization: `Bearer ${secret}` };
  return {
    responses: {
      url: `${gatewayUrl}/v1/responses`,
      headers: auth,
      body: JSON.stringify({ model: "any", input: "hi" }),
    },
    // Anthropic's clients send the key as x-api-key and always a max_tokens (the key sets no ceiling).
    messages: {
      url: `${gatewayUrl}/v1/messages`,
      headers: { ...JSON_TYPE, "x-api-key": secret, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "any", max_tokens: 1024, messages }),
    },
  };
}

export async function facesFigures(options: {
  tool: LoadTool;
  rounds: number;
  seconds: number;
  connections: number;
  log: (line: string) => void;
}): Promise<FacesFigures> {
  const children: Child[] = [];
  let closeGateway: (() => Promise<void>) | undefined;
  let runs: { single: Record<Target, RoundRun[]>; loaded: Record<Target, RoundRun[]> };
  try {
    const backend = await spawnDeno({
      name: "backend",
      args: ["run", "--allow-net", "bench/fast_backend.ts"],
    });
    children.push(backend);
    const gateway = await startBenchGateway(backend.url);
    closeGateway = gateway.close;
    const url = gateway.child.url;
    const pid = gateway.child.pid;
    const faces = faceTargets(url, gateway.secret);
    const targets: Record<Target, LoadTarget> = {
      direct: { spec: ollamaTarget("direct", backend.url).whole, pid: backend.pid },
      chat: { spec: gatewayTarget(url, gateway.secret).whole, pid },
      responses: { spec: faces.responses, pid },
      messages: { spec: faces.messages, pid },
    };
    await smokeTest(targets);
    runs = await loadInRounds(targets, { ...options, what: "faces" });
  } finally {
    await closeGateway?.();
    for (const child of children.reverse()) await child.stop();
  }
  const { single, loaded } = runs;
  const added = (t: Target) => single[t].map((r, i) => r.p50Us - single.direct[i].p50Us);
  const of = <T extends string>(names: readonly T[], f: (name: T) => number) =>
    Object.fromEntries(names.map((n) => [n, f(n)])) as Record<T, number>;
  const all = ["direct", "chat", ...FACES] as const;
  const ratios = (face: Face, pick: (r: RoundRun) => number) =>
    perRound(loaded[face], loaded.chat, (f, c) => pick(f) / pick(c));
  const addedRatios = (face: Face) => perRound(added(face), added("chat"), (f, c) => f / c);
  return {
    rounds: options.rounds,
    secondsPerRun: options.seconds,
    connections: options.connections,
    p50Us: of(all, (t) => median(single[t].map((r) => r.p50Us))),
    addedP50Us: of(["chat", ...FACES] as const, (t) => median(added(t))),
    requestsPerSec: of(all, (t) => median(loaded[t].map((r) => r.requestsPerSec))),
    cpuUsPerRequest: of(all, (t) => median(loaded[t].map((r) => r.cpuUsPerRequest))),
    toChat: Object.fromEntries(FACES.map((face) => [face, {
      addedP50: median(addedRatios(face)),
      requestsPerSec: median(ratios(face, (r) => r.requestsPerSec)),
      cpuUsPerRequest: median(ratios(face, (r) => r.cpuUsPerRequest)),
      rounds: { addedP50: addedRatios(face), requestsPerSec: ratios(face, (r) => r.requestsPerSec) },
    }])) as FacesFigures["toChat"],
  };
}

/** The lowest and highest of the rounds' ratios. */
const range = (ratios: number[]) => `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;

const FACE_LABEL: Record<Face, string> = { responses: "/v1/responses", messages: "/v1/messages" };

export function facesRows(f: FacesFigures): Row[] {
  const c = f.connections;
  return [
    {
      figure: "Latency p50, 1 connection: direct / chat completions / responses / messages",
      value: (["direct", "chat", ...FACES] as const).map((t) => us(f.p50Us[t])).join(" / "),
      target: "",
    },
    {
      figure: `Throughput, ${c} connections: direct / chat completions / responses / messages (req/s)`,
      value: (["direct", "chat", ...FACES] as const).map((t) => count(f.requestsPerSec[t])).join(" / "),
      target: "",
    },
    ...FACES.flatMap((face): Row[] => {
      const r = f.toChat[face];
      return [
        {
          figure: `${FACE_LABEL[face]} vs chat completions: added latency p50, 1 connection`,
          value: `${us(f.addedP50Us[face])} vs ${us(f.addedP50Us.chat)} (${times(r.addedP50)}; ` +
            `rounds ${range(r.rounds.addedP50)})`,
          target: `within ${pct(SPREAD)} (≤ × ${(1 + SPREAD).toFixed(2)})`,
          pass: r.addedP50 <= 1 + SPREAD,
        },
        {
          figure: `${FACE_LABEL[face]} vs chat completions: throughput, ${c} connections (req/s)`,
          value: `${count(f.requestsPerSec[face])} vs ${count(f.requestsPerSec.chat)} ` +
            `(${times(r.requestsPerSec)}; rounds ${range(r.rounds.requestsPerSec)})`,
          target: `within ${pct(SPREAD)} (≥ × ${(1 - SPREAD).toFixed(2)})`,
          pass: r.requestsPerSec >= 1 - SPREAD,
        },
        {
          figure: `${FACE_LABEL[face]} vs chat completions: gateway CPU per request, ${c} connections`,
          value: `${us(f.cpuUsPerRequest[face])} vs ${us(f.cpuUsPerRequest.chat)} (${
            times(r.cpuUsPerRequest)
          })`,
          target: "reference",
        },
      ];
    }),
  ];
}
