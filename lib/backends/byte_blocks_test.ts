import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { copyOf, framedRequest } from "./byte_blocks.ts";

const HEAD = "POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1:1\r\n";
const decoder = new TextDecoder();

function expected(head: string, body: string): string {
  return `${head}content-length: ${new TextEncoder().encode(body).byteLength}\r\n\r\n${body}`;
}

Deno.test("a framed request is its head, the body's length in bytes and its body, whatever the body's characters", () => {
  for (const body of ["", '{"a":1}', '{"text":"héllo wörld — ☃ 𝄞"}', "\u{1F600}".repeat(300)]) {
    assert.equal(decoder.decode(framedRequest(HEAD, body)), expected(HEAD, body));
  }
});

Deno.test("pieces cut one after another keep their bytes, across blocks and for bodies too large for one", () => {
  const made: [Uint8Array, string][] = [];
  for (let i = 0; i < 500; i++) {
    // Sizes from a few bytes to past the largest piece a block gives, some with multi-byte characters.
    const body = JSON.stringify({ i, text: (i % 3 ? "x" : "ü").repeat((i * 37) % 9_000) });
    made.push([framedRequest(HEAD, body), expected(HEAD, body)]);
  }
  for (const [bytes, text] of made) assert.equal(decoder.decode(bytes), text);
});

Deno.test("a copy keeps its bytes when the source is reused, and as many copies as are kept", () => {
  const source = Buffer.alloc(16 * 1024);
  const copies: [Uint8Array, number][] = [];
  for (let i = 0; i < 300; i++) {
    const length = (i * 97) % 12_000;
    source.fill(i % 251, 0, length + 10);
    const copy = copyOf(source, 10, 10 + length);
    assert.equal(copy.byteLength, length);
    copies.push([copy, i % 251]);
  }
  source.fill(255);
  for (const [copy, value] of copies) assert.ok(copy.every((byte) => byte === value));
});
