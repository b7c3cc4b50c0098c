/**
 * @module A counted HTTP/1.1 connection kept alive for as long as the gateway keeps it, to send a request on
 * the same connection as one before.
 */
import { Client } from "undici";

/** One HTTP/1.1 connection, counted: a request that could not reuse it would open another. */
export class KeptConnection {
  readonly client: Client;
  connects = 0;
  constructor(url: string) {
    // No keep-alive bound of the client's own: the connection stays as long as the gateway keeps it.
    this.client = new Client(url, { pipelining: 1, keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 });
    this.client.on("connect", () => this.connects++);
  }

  request(method: string, path: string, key: string | undefined, body?: string) {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (key) headers.authorization = `Bearer ${key}`;
    return this.client.request({ method, path, headers, body });
  }
}
