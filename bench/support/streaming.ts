/**
 * Streamed answers, measured with fetch from the bench's own process (never the gateway's): time to the first
 * body byte, and how many chunks per second arrive once they flow.
 */

export interface StreamTarget {
  url: string;
  headers: Record<string, string>;
  /** The request body for an answer of `chunks` chunks. */
  body(chunks: number): string;
  /** What starts each chunk in the body: `data: ` for SSE, a newline ends each NDJSON line. */
  marker: string;
}

export function median(values: number[]): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function count(text: string, marker: string): number {
  let n = 0;
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + marker.length)) n++;
  return n;
}

async function post(target: StreamTarget, chunks: number): Promise<Response> {
  const res = await fetch(target.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...target.headers },
    body: target.body(chunks),
  });
  if (res.status !== 200) throw new Error(`${target.url} answered ${res.status}: ${await res.text()}`);
  return res;
}

/** One streamed request: µs from sending it to the first body byte; the rest is read to the end. */
export async function firstByteUs(target: StreamTarget, chunks = 8): Promise<number> {
  const start = performance.now();
  const res = await post(target, chunks);
  const reader = res.body!.getReader();
  const first = await reader.read();
  const elapsed = (performance.now() - start) * 1000;
  if (first.done) throw new Error(`${target.url} sent an empty stream`);
  while (!(await reader.read()).done);
  return elapsed;
}

/** Median first-byte time over `samples` sequential requests. */
export async function medianFirstByteUs(target: StreamTarget, samples: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) times.push(await firstByteUs(target));
  return median(times);
}

/** Chunks per second of one long answer, from its first byte to its end; checks they all arrived. */
export async function chunksPerSecond(target: StreamTarget, chunks: number): Promise<number> {
  const res = await post(target, chunks);
  const decoder = new TextDecoder();
  let seen = 0;
  let carry = "";
  let firstAt: number | undefined;
  for await (const bytes of res.body!) {
    firstAt ??= performance.now();
    // A marker may straddle two reads: the carried tail is too short to hold a whole one, so none is counted twice.
    const text = carry + decoder.decode(bytes, { stream: true });
    seen += count(text, target.marker);
    carry = target.marker.length > 1 ? text.slice(-(target.marker.length - 1)) : "";
  }
  const seconds = (performance.now() - (firstAt ?? performance.now())) / 1000;
  if (seen < chunks) throw new Error(`${target.url} delivered ${seen} of ${chunks} chunks`);
  return seen / seconds;
}
