/**
 * A raw HTTP/1.1 client on one TCP connection, for what fetch never sends: a Content-Length the body will not
 * honour, a chunked upload that stops halfway, bytes dripped one at a time, floods of headers, broken framing.
 * It reads the gateway's answer while the upload is still unfinished, which is the point of these tests.
 */

export interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

const HEAD_END = new TextEncoder().encode("\r\n\r\n");

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

export class RawConnection {
  #received = new Uint8Array(0);
  #ended = false;
  #closed = false;
  /** Bytes written so far, headers included. */
  sent = 0;

  private constructor(private readonly conn: Deno.TcpConn) {}

  static async open(baseUrl: string): Promise<RawConnection> {
    const { hostname, port } = new URL(baseUrl);
    return new RawConnection(await Deno.connect({ hostname, port: Number(port) }));
  }

  /** Writes all of `data`; false once the peer has hung up (it may, having answered). */
  async write(data: string | Uint8Array): Promise<boolean> {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    try {
      for (let off = 0; off < bytes.length;) off += await this.conn.write(bytes.subarray(off));
      this.sent += bytes.length;
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The next response, or undefined when the peer closed without one or nothing complete came within
   * `timeoutMs` (the connection is then closed, so no read outlives the call).
   */
  async response(timeoutMs: number): Promise<RawResponse | undefined> {
    const deadline = Date.now() + timeoutMs;
    let head = -1;
    while ((head = indexOf(this.#received, HEAD_END)) < 0) {
      if (!(await this.#more(deadline))) return undefined;
    }
    const lines = new TextDecoder().decode(this.#received.subarray(0, head)).split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
    const headers = new Headers(
      lines.slice(1).map((l) => {
        const colon = l.indexOf(":");
        return [l.slice(0, colon).trim(), l.slice(colon + 1).trim()] as [string, string];
      }),
    );
    const length = Number(headers.get("content-length") ?? NaN);
    const start = head + HEAD_END.length;
    while (Number.isFinite(length) ? this.#received.length - start < length : !this.#ended) {
      if (!(await this.#more(deadline))) break;
    }
    const end = Number.isFinite(length) ? start + length : this.#received.length;
    const body = new TextDecoder().decode(this.#received.subarray(start, end));
    this.#received = this.#received.slice(end);
    return { status, headers, body };
  }

  /** Reads once more before the deadline; false at the end of the stream or when time is up. */
  async #more(deadline: number): Promise<boolean> {
    if (this.#ended) return false;
    const buf = new Uint8Array(64 * 1024);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((r) =>
      timer = setTimeout(() => r("timeout"), deadline - Date.now())
    );
    const n = await Promise.race([this.conn.read(buf).catch(() => null), timedOut]);
    clearTimeout(timer);
    if (n === "timeout") {
      this.close();
      return false;
    }
    if (n === null) {
      this.#ended = true;
      return false;
    }
    const grown = new Uint8Array(this.#received.length + n);
    grown.set(this.#received);
    grown.set(buf.subarray(0, n), this.#received.length);
    this.#received = grown;
    return true;
  }

  close(): void {
    this.#ended = true;
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close();
    } catch {
      // already closed by the peer
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** Request head for a chat POST; `extra` holds the framing headers under test. */
export function chatHead(path: string, key: string, extra: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\n${extra}\r\n`;
}

/** One chunk of a chunked upload. */
export const chunk = (data: string) => `${new TextEncoder().encode(data).length.toString(16)}\r\n${data}\r\n`;
