/**
 * @module The just-started rows: what a client meets right after the gateway and the bare proxy were started,
 * before any load warmed either (the case of a one-off measurement, of a restart, of a new replica). Each
 * round starts a fresh backend, bare proxy and gateway (`deno task start`'s flags, its warm-up on as
 * configured by default), then sends sequential short streams, one to each target in turn (the order
 * rotating), and times their first body byte; then whole answers at one connection the same way. Every figure
 * is the gateway's median minus the bare proxy's in the same round, then the median over rounds.
 */
import { startBenchTrio } from "./gateway_setup.ts";
import { firstByteUs, median } from "./streaming.ts";
import type { Target } from "./targets.ts";
import { inRounds, interleavedMedians } from "./rounds.ts";
import { type Row, us } from "./report.ts";

const STREAMS = 200;
const WHOLE = 200;
const FIRST_BYTE_OVER_BARE_US = 150;
const GATEWAYS = ["gateway", "gatewayB"] as const;
const LABEL = { gateway: "format A", gatewayB: "format B" } as const;

type Timed = "bare" | "gateway" | "gatewayB";
type PerRound = Record<Timed, number[]>;

export interface FreshStartFigures {
  rounds: number;
  streams: number;
  whole: number;
  /** Per round: each target's median first byte (µs) over its first `streams` streams. */
  firstByteUs: PerRound;
  /** Per round: each target's median time (µs) for a whole answer at one connection, after the streams. */
  wholeUs: PerRound;
  /** Per round: ms from spawning the gateway to its listening (its warm-up included). */
  gatewayStartMs: number[];
}

async function wholeAnswerUs(target: Target): Promise<number> {
  const { url, headers, body } = target.whole;
  const start = performance.now();
  const res = await fetch(url, { method: "POST", headers, body });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return (performance.now() - start) * 1000;
}

export async function freshStartFigures(options: {
  rounds: number;
  log: (line: string) => void;
}): Promise<FreshStartFigures> {
  const firstByte: PerRound = { bare: [], gateway: [], gatewayB: [] };
  const whole: PerRound = { bare: [], gateway: [], gatewayB: [] };
  const gatewayStartMs: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    options.log(`round ${round + 1}/${options.rounds}: just started`);
    const { targets, stop, gateway } = await startBenchTrio();
    try {
      gatewayStartMs.push(gateway.spawnToListenMs);
      const timed: Timed[] = ["bare", ...GATEWAYS];
      const fb = await interleavedMedians(timed, STREAMS, (t) => firstByteUs(targets[t].streamed));
      const wh = await interleavedMedians(timed, WHOLE, (t) => wholeAnswerUs(targets[t]));
      for (const name of ["bare", ...GATEWAYS] as const) {
        firstByte[name].push(fb[name]);
        whole[name].push(wh[name]);
      }
    } finally {
      await stop();
    }
  }
  return {
    rounds: options.rounds,
    streams: STREAMS,
    whole: WHOLE,
    firstByteUs: firstByte,
    wholeUs: whole,
    gatewayStartMs,
  };
}

/** A difference, with its sign either way: "+24 µs", "−22 µs". */
const signedUs = (n: number) => `${Math.round(n) < 0 ? "−" : "+"}${us(Math.abs(n))}`;

export function freshStartRows(f: FreshStartFigures): Row[] {
  const over = (figures: PerRound, g: typeof GATEWAYS[number]) =>
    inRounds(figures[g], figures.bare, (x, b) => x - b);
  const each = (figures: PerRound, g: typeof GATEWAYS[number]) =>
    figures[g].map((x, i) => Math.round(x - figures.bare[i])).join(", ");
  return [
    ...GATEWAYS.map((g): Row => {
      const added = over(f.firstByteUs, g);
      return {
        figure:
          `Just started: first byte of the first ${f.streams} sequential streams over the bare proxy's ` +
          `(${LABEL[g]}; both just started)`,
        value: `${signedUs(added)} (rounds ${each(f.firstByteUs, g)}; bare proxy ${
          us(median(f.firstByteUs.bare))
        })`,
        target: `≤ +${FIRST_BYTE_OVER_BARE_US} µs`,
        pass: added <= FIRST_BYTE_OVER_BARE_US,
      };
    }),
    {
      figure: `Just started, after the streams: whole answers at 1 connection over the bare proxy's (A / B)`,
      value: GATEWAYS.map((g) => signedUs(over(f.wholeUs, g))).join(" / ") +
        ` (rounds A ${each(f.wholeUs, "gateway")}; B ${each(f.wholeUs, "gatewayB")})`,
      target: "",
    },
    {
      figure: "Gateway start, from its process spawned to listening (its warm-up included)",
      value: `${Math.round(median(f.gatewayStartMs))} ms (rounds ${
        f.gatewayStartMs.map(Math.round).join(", ")
      })`,
      target: "",
    },
  ];
}
