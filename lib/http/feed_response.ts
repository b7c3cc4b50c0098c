/**
 * @module Responses whose body never ends by itself (the admin page's event feed). The drain ends them as soon
 * as the gateway stops, since they carry nothing to account. They are marked where they are made: asking any
 * response for its `body` to find out would turn every plain answer's static body into a stream, which the
 * runtime then sends the slow way.
 */
const feeds = new WeakSet<Response>();

export function feedResponse(body: ReadableStream<Uint8Array>, init?: ResponseInit): Response {
  const response = new Response(body, init);
  feeds.add(response);
  return response;
}

export function isFeed(response: Response): boolean {
  return feeds.has(response);
}
