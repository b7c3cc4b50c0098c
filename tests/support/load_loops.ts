/**
 * Bounded client load for process tests: several loops, each sending one chat at a time (so each has at most
 * one in flight), rotating through both formats, streamed and not, and noting how every request ended as the
 * client saw it. A loop stops at its first broken connection, as a client of a crashed server would.
 */

export type Outcome =
  /** A whole answer: the JSON body, or a stream up to its clean finish. */
  | "complete"
  /** An answer with another status (429, 503...), fully read. */
  | "refused"
  /** The connection broke, or the answer ended without its finish: in flight when the server died. */
  | "broken";

export interface Sent {
  key: string;
  outcome: Outcome;
  status?: number;
  /** Epoch ms when the request was sent and when its answer ended (or broke). */
  sentAt: number;
  endedAt: number;
}

const KINDS = [
  { path: "/v1/chat/completions", stream: false },
  { path: "/v1/chat/completions", stream: true },
  { path: "/v1/chat.php", stream: false },
  { path: "/v1/chat.php", stream: true },
] as const;

function finished(path: string, stream: boolean, text: string): boolean {
  const openai = path === "/v1/chat/completions";
  if (!stream) {
    const body = JSON.parse(text);
    return typeof (openai ? body.choices?.[0]?.message?.content : body.message?.content) === "string";
  }
  if (openai) return text.trimEnd().endsWith("data: [DONE]");
  const last = JSON.parse(text.trimEnd().split("\n").at(-1)!);
  return last.done === true;
}

/** One chat of kind `kind % 4`; never throws. */
export async function sendOne(url: string, key: string, kind: number): Promise<Sent> {
  const { path, stream } = KINDS[kind % KINDS.length];
  const sentAt = Date.now();
  try {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream }),
    });
    const text = await res.text();
    const outcome = res.status !== 200 ? "refused" : finished(path, stream, text) ? "complete" : "broken";
    return { key, outcome, status: res.status, sentAt, endedAt: Date.now() };
  } catch {
    return { key, outcome: "broken", sentAt, endedAt: Date.now() };
  }
}

export interface LoadPlan {
  url: string;
  /** One loop per entry, using that key. */
  keys: string[];
  perLoop: number;
  /** Every result, as it comes; loops run until `perLoop` or their first broken request. */
  results: Sent[];
}

/** Runs the loops; resolves when all of them have stopped. */
export async function runLoops({ url, keys, perLoop, results }: LoadPlan): Promise<void> {
  await Promise.all(keys.map(async (key, loop) => {
    for (let n = 0; n < perLoop; n++) {
      const sent = await sendOne(url, key, loop + n);
      results.push(sent);
      if (sent.outcome === "broken") return;
    }
  }));
}

export const count = (results: Sent[], key: string, outcome: Outcome) =>
  results.filter((r) => r.key === key && r.outcome === outcome).length;

/** The minute (epoch ms / 60 000) a request certainly fell in, when it was sent and ended within one. */
export function minuteOf(sent: Sent): number | undefined {
  const a = Math.floor(sent.sentAt / 60_000);
  return a === Math.floor(sent.endedAt / 60_000) ? a : undefined;
}
