/**
 * @module The core section's streaming figures: time to the first byte through each target, in rounds of one
 * stream to each target in turn (the order rotating), so that the targets compared saw the same machine; and the
 * chunk rate of one long answer, direct and through the gateway, with the gateway's CPU per chunk.
 */
import { cpuTimeUs } from "./spawn.ts";
import { chunksPerSecond, firstByteUs, median, medianFirstByteUs } from "./streaming.ts";
import { type Target, TARGET_NAMES, type TargetName } from "./targets.ts";
import type { Figures } from "./report.ts";
import { inRounds, interleavedMedians } from "./rounds.ts";

export async function streamingFigures(
  targets: Record<TargetName, Target>,
  gatewayPid: number,
  { rounds, firstByteSamples, longStreamChunks, log, warm }: {
    rounds: number;
    firstByteSamples: number;
    longStreamChunks: number;
    log: (line: string) => void;
    /** Puts a load of short streams on a target. */
    warm: (target: TargetName) => Promise<unknown>;
  },
): Promise<{ streaming: Figures["streaming"]; firstByteBToA: number }> {
  const firstByte: Record<TargetName, number[]> = { direct: [], bare: [], gateway: [], gatewayB: [] };
  const rate = { direct: [] as number[], gateway: [] as number[] };
  const cpuPerChunk: number[] = [];
  // A stream runs code of its own, which the whole answers before did not make hot: timed before V8 has
  // optimized it (some thousands of streams), a first byte would time the compiler's warm-up, not the stream.
  // Every target gets the same warm-up.
  log("streaming: warming up");
  for (const t of TARGET_NAMES) await warm(t);
  for (const t of TARGET_NAMES) await medianFirstByteUs(targets[t].streamed, 10);
  for (let round = 0; round < rounds; round++) {
    log(`round ${round + 1}/${rounds}: streaming`);
    const medians = await interleavedMedians(
      TARGET_NAMES,
      firstByteSamples,
      (t) => firstByteUs(targets[t].streamed),
      round,
    );
    for (const t of TARGET_NAMES) firstByte[t].push(medians[t]);
    rate.direct.push(await chunksPerSecond(targets.direct.streamed, longStreamChunks));
    const cpuBefore = await cpuTimeUs(gatewayPid) ?? NaN;
    rate.gateway.push(await chunksPerSecond(targets.gateway.streamed, longStreamChunks));
    cpuPerChunk.push(((await cpuTimeUs(gatewayPid) ?? NaN) - cpuBefore) / longStreamChunks);
  }
  const over = (name: TargetName, base: TargetName) =>
    inRounds(firstByte[name], firstByte[base], (t, b) => t - b);
  return {
    streaming: {
      directFirstByteUs: median(firstByte.direct),
      bareFirstByteUs: median(firstByte.bare),
      gatewayFirstByteUs: median(firstByte.gateway),
      gatewayBFirstByteUs: median(firstByte.gatewayB),
      gatewayOverheadUs: over("gateway", "direct"),
      gatewayBOverheadUs: over("gatewayB", "direct"),
      gatewayOverBareUs: over("gateway", "bare"),
      gatewayBOverBareUs: over("gatewayB", "bare"),
      directChunksPerSec: median(rate.direct),
      gatewayChunksPerSec: median(rate.gateway),
      gatewayCpuUsPerChunk: median(cpuPerChunk),
    },
    firstByteBToA: inRounds(firstByte.gatewayB, firstByte.gateway, (b, a) => b / a),
  };
}
