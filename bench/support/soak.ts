/**
 * The streamed soak: a long run of streamed chats at full concurrency, with the process's resident memory read
 * early (at 10 s) and at the end of the load. Memory that streams leave behind shows as growth between the two;
 * the bare proxy, soaked the same way, is the reference.
 */
import { type LoadResult, type LoadSpec, type LoadTool, runLoad } from "./load.ts";
import { memoryOf } from "./spawn.ts";

export interface SoakFigures {
  requests: number;
  rssAt10sMb: number;
  rssEndMb: number;
}

const EARLY_MS = 10_000;
/** The end reading comes this long before the load stops, so it sees the process under load. */
const BEFORE_END_MS = 500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function streamedSoak(
  tool: LoadTool,
  spec: Omit<LoadSpec, "connections" | "seconds">,
  pid: number,
  options: { seconds: number; connections: number; check: (r: LoadResult) => LoadResult },
): Promise<SoakFigures> {
  const started = performance.now();
  const load = runLoad(tool, { ...spec, connections: options.connections, seconds: options.seconds });
  await sleep(EARLY_MS);
  const early = (await memoryOf(pid))?.currentMb ?? NaN;
  await sleep(options.seconds * 1000 - BEFORE_END_MS - (performance.now() - started));
  const end = (await memoryOf(pid))?.currentMb ?? NaN;
  const result = options.check(await load);
  return { requests: result.requests, rssAt10sMb: early, rssEndMb: end };
}
