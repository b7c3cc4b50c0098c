/**
 * @module Watches: a Watch request answered with a stream of WatchOutput messages, each prefixed with its
 * length (4 bytes, little-endian). The first message carries every watched key; later ones mark as changed only
 * the keys whose versionstamp moved since the last message. An empty message every 5 s says the server is alive.
 * The local store's own watch drives it.
 */
import { decodeKey } from "./key_codec.ts";
import { BadRequest, decode, encode, messages, SnapshotReadStatus } from "./schema.ts";
import { encodeValue, versionstampBytes } from "./value_codec.ts";

const PING_MS = 5_000;

export interface Watching {
  body: ReadableStream<Uint8Array>;
  /** Ends the stream from the server's side, as a dropped connection would. */
  cut(): void;
}

/**
 * `delay` runs before each message goes out (the one-way trip of the injected latency); `onEnd` once the
 * stream has ended, however it ended.
 */
export function watch(
  kv: Deno.Kv,
  body: Uint8Array,
  { delay, onEnd }: { delay: () => Promise<void>; onEnd: () => void },
): Watching {
  const { keys: wire } = decode<{ keys: { key: Uint8Array }[] }>(messages.Watch, body);
  const keys = wire.map(({ key }) => {
    const decoded = decodeKey(key);
    if (!decoded?.length) throw new BadRequest("A watched key is not a valid Deno KV key.");
    return decoded;
  });
  let source: ReadableStream<Deno.KvEntryMaybe<unknown>[]>;
  try {
    source = kv.watch(keys);
  } catch (error) {
    if (error instanceof TypeError) throw new BadRequest(error.message);
    throw error;
  }
  const reader = source.getReader();
  const sent: (string | null | undefined)[] = keys.map(() => undefined);
  let ping: ReturnType<typeof setInterval> | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(ping);
    onEnd();
    reader.cancel().catch(() => {});
  };
  const send = (message: Uint8Array) => {
    if (ended) return;
    const frame = new Uint8Array(4 + message.length);
    new DataView(frame.buffer).setUint32(0, message.length, true);
    frame.set(message, 4);
    controller.enqueue(frame);
  };
  const pump = async () => {
    for (;;) {
      const { value: entries, done } = await reader.read();
      if (done || ended) return;
      const changed = entries.map((entry, i) => entry.versionstamp !== sent[i]);
      if (!changed.some(Boolean)) continue;
      const output = entries.map((entry, i) => {
        if (!changed[i]) return { changed: false };
        sent[i] = entry.versionstamp;
        return {
          changed: true,
          entryIfChanged: entry.versionstamp === null ? undefined : wireEntry(wire[i].key, entry),
        };
      });
      const message = encode(messages.WatchOutput, { status: SnapshotReadStatus.SUCCESS, keys: output });
      await delay();
      send(message);
    }
  };
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      ping = setInterval(() => send(new Uint8Array()), PING_MS);
      pump().catch(() => {}).finally(() => {
        if (!ended) controller.close();
        end();
      });
    },
    cancel: end,
  });
  return {
    body: stream,
    cut() {
      if (ended) return;
      end();
      controller.error(new Error("watch cut"));
    },
  };
}

function wireEntry(key: Uint8Array, entry: Deno.KvEntryMaybe<unknown>) {
  const { data, encoding } = encodeValue(entry.value);
  return { key, value: data, encoding, versionstamp: versionstampBytes(entry.versionstamp!) };
}
