/**
 * @module A soak of long streamed answers: every connection asks for streams of `chunks` numbered chunks
 * (`w0 w1 …`, as the bench backend numbers them) one after the other, in turn in each target's format, and
 * checks each chunk arrives once and in order; the gateway's resident memory is read at 10 s and at the end.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import type { StreamTarget } from "./streaming.ts";
import { memoryOf } from "./spawn.ts";

export interface LongSoakFigures {
  seconds: number;
  connections: number;
  chunks: number;
  /** Streams read to their end. */
  streams: number;
  /** Content chunks that arrived in their place. */
  chunksDelivered: number;
  /** Streams with a chunk missing, repeated or out of place, or that failed. */
  faults: number;
  rssAt10sMb: number;
  rssEndMb: number;
}

const EARLY_MS = 10_000;
const BEFORE_END_MS = 500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The content pieces of a streamed answer, SSE (format A) or NDJSON (format B). */
async function* pieces(res: Response, sse: boolean): AsyncGenerator<string> {
  const text = res.body!.pipeThrough(new TextDecoderStream());
  if (sse) {
    for await (const event of text.pipeThrough(new EventSourceParserStream())) {
      if (event.data === "[DONE]") return;
      const content = JSON.parse(event.data).choices?.[0]?.delta?.content;
      if (content) yield content;
    }
    return;
  }
  let rest = "";
  for await (const part of text) {
    const lines = (rest + part).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      if (!line) continue;
      const content = JSON.parse(line).message?.content;
      if (content) yield content;
    }
  }
}

/** Reads one stream; the number of chunks that came in their place, or -1 if any did not. */
async function oneStream(target: StreamTarget, chunks: number): Promise<number> {
  const res = await fetch(target.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...target.headers },
    body: target.body(chunks),
  });
  if (res.status !== 200) {
    await res.body?.cancel();
    return -1;
  }
  let next = 0;
  for await (const piece of pieces(res, target.marker === "data: ")) {
    if (piece !== `w${next} `) return -1;
    next++;
  }
  return next === chunks ? next : -1;
}

export async function longStreamSoak(
  targets: StreamTarget[],
  pid: number,
  options: { seconds: number; connections: number; chunks: number },
): Promise<LongSoakFigures> {
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const figures: LongSoakFigures = {
    ...options,
    streams: 0,
    chunksDelivered: 0,
    faults: 0,
    rssAt10sMb: NaN,
    rssEndMb: NaN,
  };
  const clients = Array.from({ length: options.connections }, async (_, i) => {
    const target = targets[i % targets.length];
    while (performance.now() < deadline) {
      const delivered = await oneStream(target, options.chunks).catch(() => -1);
      if (delivered < 0) figures.faults++;
      else figures.chunksDelivered += delivered;
      figures.streams++;
    }
  });
  await sleep(EARLY_MS);
  figures.rssAt10sMb = (await memoryOf(pid))?.currentMb ?? NaN;
  await sleep(Math.max(0, deadline - BEFORE_END_MS - performance.now()));
  figures.rssEndMb = (await memoryOf(pid))?.currentMb ?? NaN;
  await Promise.all(clients);
  return figures;
}
