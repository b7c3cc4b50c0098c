/**
 * HTTP/1.1 spoken by hand over one TCP connection, for what a client library hides: a head sent a byte at a
 * time, a connection kept and reused on purpose, and the moment the server closes it.
 */
export async function connectTo(url: string): Promise<Deno.TcpConn> {
  const { hostname, port } = new URL(url);
  return await Deno.connect({ hostname, port: Number(port) });
}

const encoder = new TextEncoder();

/** Writes, and tells whether the server still took it. */
export async function send(conn: Deno.Conn, text: string): Promise<boolean> {
  try {
    await conn.write(encoder.encode(text));
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads until the server closes the connection (or resets it); throws if that takes longer than `limitMs`.
 * Returns what arrived and when the connection ended, from the call.
 */
export async function readUntilClosed(
  conn: Deno.Conn,
  limitMs: number,
): Promise<{ text: string; ms: number }> {
  const start = performance.now();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.close();
  }, limitMs);
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(16 * 1024);
  let text = "";
  try {
    for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
    conn.close();
  } catch (error) {
    if (timedOut) throw new Error(`still open after ${limitMs} ms: ${text}`);
    // A reset is the server closing too.
    if (!(error instanceof Deno.errors.ConnectionReset)) throw error;
  } finally {
    clearTimeout(timer);
  }
  return { text, ms: performance.now() - start };
}

/** Sends a POST with a JSON body on a kept connection and reads its whole (non-streamed) answer. */
export async function postOn(conn: Deno.Conn, path: string, key: string, body: unknown) {
  const json = JSON.stringify(body);
  const bytes = encoder.encode(json).byteLength;
  await conn.write(encoder.encode(
    `POST ${path} HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n` +
      `Authorization: Bearer ${key}\r\nContent-Length: ${bytes}\r\n\r\n${json}`,
  ));
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(16 * 1024);
  let text = "";
  for (;;) {
    const n = await conn.read(buffer);
    if (n === null) throw new Error(`closed mid-answer: ${text}`);
    text += decoder.decode(buffer.subarray(0, n), { stream: true });
    const headEnd = text.indexOf("\r\n\r\n");
    if (headEnd < 0) continue;
    const head = text.slice(0, headEnd);
    const body = text.slice(headEnd + 4);
    const length = /content-length: *(\d+)/i.exec(head)?.[1];
    const complete = length === undefined
      ? /transfer-encoding: *chunked/i.test(head) && body.endsWith("0\r\n\r\n")
      : encoder.encode(body).byteLength >= Number(length);
    if (complete) {
      return { status: Number(text.slice(9, 12)), body: text.slice(headEnd + 4) };
    }
  }
}
