/**
 * @module A backend call's small pieces of bytes (its request, each body chunk copied out of the read
 * buffer), cut from shared blocks as Node's Buffer pool cuts them, but from blocks four times its size: each
 * new block costs far more than its bytes (profiled under short streams: the pool's new 8 KB blocks were some
 * 2 µs of a request, the request's separate length count 1 µs more). A piece kept alive keeps its whole
 * block, so pieces are for what is let go soon: a request is dropped once written and answered, and a chunk
 * that must wait behind another for a slow reader gets bytes of its own (`upstream.ts`).
 */
import { Buffer } from "node:buffer";

const BLOCK = 32 * 1024;
/** A piece larger than this gets its own allocation: a block holds several pieces or none. */
const LARGEST = BLOCK / 4;
/** UTF-8 takes at most three bytes per UTF-16 unit. */
const UTF8_PER_UNIT = 3;
/** The `content-length` line at its longest. */
const LENGTH_LINE = "content-length: 9007199254740991\r\n\r\n".length;

const encoder = new TextEncoder();
let block = newBlock();
let used = 0;

/** Unfilled (its bytes are written before they are read), and a plain Uint8Array: a Buffer's views cost more. */
function newBlock(): Uint8Array {
  const bytes = Buffer.allocUnsafeSlow(BLOCK);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, BLOCK);
}

/** Where `size` bytes can go in the current block, a new one if this one has not the room. */
function take(size: number): number {
  if (used + size > BLOCK) {
    block = newBlock();
    used = 0;
  }
  const at = used;
  used += size;
  return at;
}

/** Bytes `start` to `end` of `bytes`, in bytes of their own (the source may be reused). */
export function copyOf(bytes: Uint8Array, start: number, end: number): Uint8Array {
  const length = end - start;
  if (length > LARGEST) return new Uint8Array(bytes.subarray(start, end));
  const at = take(length);
  block.set(bytes.subarray(start, end), at);
  return block.subarray(at, at + length);
}

/** `head` (its lines, each ending in CRLF), the body's `content-length` line and the body, as UTF-8. */
export function framedRequest(head: string, body: string): Uint8Array {
  const headRoom = (head.length + LENGTH_LINE) * UTF8_PER_UNIT;
  const most = headRoom + body.length * UTF8_PER_UNIT;
  if (most > LARGEST) {
    return Buffer.from(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  // The body goes in first, past the room its head can take, which gives its length; the head then goes in
  // front, and the body is moved up to it.
  const at = take(most);
  const bodyAt = at + headRoom;
  const bodyLength = encoder.encodeInto(body, block.subarray(bodyAt)).written;
  const headLength = encoder.encodeInto(
    `${head}content-length: ${bodyLength}\r\n\r\n`,
    block.subarray(at, bodyAt),
  ).written;
  block.copyWithin(at + headLength, bodyAt, bodyAt + bodyLength);
  // What the worst case set aside beyond the request is given back when nothing was cut after it.
  if (used === at + most) used = at + headLength + bodyLength;
  return block.subarray(at, at + headLength + bodyLength);
}
