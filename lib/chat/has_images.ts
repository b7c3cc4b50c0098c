import type { ChatRequest } from "./types.ts";

/** Whether any message carries an image; backends treat an image complaint from such a request specially. */
export function hasImages(req: ChatRequest): boolean {
  return req.messages.some((m) => m.images?.length);
}
