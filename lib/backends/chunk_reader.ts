/**
 * @module Reading a response body into one buffer of its own, reused from read to read. The runtime's default
 * reader hands out each chunk as a view on a fresh 64 KiB buffer, whatever the chunk's size: for a stream of
 * small events that is 64 KiB of native memory per read until the collector gets to it, which made the
 * gateway's memory under streamed load several times the size of what it was actually holding.
 */

/** Enough for the events of a chat stream; a larger burst simply takes more reads. */
const BUFFER_BYTES = 16 * 1024;

export interface ChunkReader {
  /** The next bytes; valid only until the following read, which reuses their memory. */
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(): Promise<void>;
}

export function chunkReader(body: ReadableStream<Uint8Array>): ChunkReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream (a body made in JS): its chunks are the sender's own, nothing to save.
    const reader = body.getReader();
    return { read: () => reader.read(), cancel: () => reader.cancel() };
  }
  let buffer = new ArrayBuffer(BUFFER_BYTES);
  return {
    async read() {
      const result = await byob.read(new Uint8Array(buffer));
      // The read took the buffer over (transferred it); what it returns is the same memory, to reuse.
      if (result.value) buffer = result.value.buffer as ArrayBuffer;
      return result.done ? { done: true, value: undefined } : { done: false, value: result.value! };
    },
    cancel: () => byob.cancel(),
  };
}
