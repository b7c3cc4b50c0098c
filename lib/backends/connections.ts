/**
 * @module The backend connections: per origin, undici `Client`s (one keep-alive connection each, one call at a
 * time), the idle ones kept on a stack. undici's `Pool` finds a free client by walking its list, and walks it
 * again after each call to learn whether any is left free: two passes over every connection per call, so the
 * cost of a call grew with the number of connections open (time inside `dispatch` 6.7–7.0 against 5.3–5.9 µs
 * a call with 256 under way; no difference measured at 64). A stack hands out a free connection and takes it
 * back in constant time, the last one used first: its socket is the likeliest to be open still, and the
 * others close once idle for undici's keep-alive time. As in undici's `Pool`, a client is kept for the life of
 * the process (its connection closes when idle; the client opens another for its next call).
 */
// First, so that undici loads with the cheap assert (see the module).
import "./undici_assert.ts";
// The client's own module, not the package's index: that loads fetch, WebSocket, caches and more, which the
// gateway never uses and which cost the process some 4 MB of memory for nothing.
import clientModule from "undici/lib/dispatcher/client.js";
import type { Client as ClientClass, Dispatcher } from "undici";

const Client = clientModule as typeof ClientClass;

type ClientOptions = ConstructorParameters<typeof ClientClass>[1];

/** One origin's clients; each is on the idle stack exactly when it can take a call. */
class OriginClients {
  readonly #idle: ClientClass[] = [];

  constructor(private readonly origin: string, private readonly options: ClientOptions) {}

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    let client = this.#idle.pop();
    // A client closed by its owner takes no more calls (one whose connection closed just opens another).
    while (client && (client.closed || client.destroyed)) client = this.#idle.pop();
    client ??= this.#open();
    // False once the call takes the client's last place: its `drain` puts it back when it is free again. False
    // too for a call refused at once (a header undici rejects): nothing is queued then, and no drain comes.
    if (client.dispatch(options, handler) || client.stats.size === 0) this.#idle.push(client);
  }

  #open(): ClientClass {
    const client = new Client(this.origin, this.options);
    client.on("drain", () => this.#idle.push(client));
    return client;
  }
}

/** Backend calls by origin; clients are made as calls need them and kept for the life of the process. */
export class Connections {
  readonly #origins = new Map<string, OriginClients>();

  constructor(private readonly options: ClientOptions) {}

  dispatch(
    options: Dispatcher.DispatchOptions & { origin: string },
    handler: Dispatcher.DispatchHandler,
  ): void {
    let origin = this.#origins.get(options.origin);
    if (!origin) this.#origins.set(options.origin, origin = new OriginClients(options.origin, this.options));
    origin.dispatch(options, handler);
  }
}
