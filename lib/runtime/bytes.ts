/**
 * @module Bytes read in pieces, as one.
 */

/** Chunks read as one; most bodies arrive in one chunk, which is returned as it is. */
export function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
