/** Anthropic's official clients, pointed at a test gateway with only a base URL and a key. */
import Anthropic from "@anthropic-ai/sdk";
import { createAnthropic } from "@ai-sdk/anthropic";

/** `base` "" reaches /v1/messages, "/api" its mirror: the SDK adds the /v1 itself. */
export function anthropicClient(url: string, apiKey: string, base: "" | "/api" = ""): Anthropic {
  return new Anthropic({ apiKey, baseURL: `${url}${base}`, maxRetries: 0 });
}

/** The AI SDK's Anthropic provider: its base URL ends in /v1, and it sends the key as x-api-key. */
export function anthropicProvider(url: string, apiKey: string) {
  return createAnthropic({ apiKey, baseURL: `${url}/v1` });
}

/** A tiny real PNG header, enough to be well-formed base64 image data. */
export const PNG = "iVBORw0KGgo=";

/** The named events of an Anthropic SSE body, in order. */
export function sseEvents(text: string): { event: string; data: Record<string, unknown> }[] {
  return text.trimEnd().split("\n\n").map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? "";
    const data = /^data: (.*)$/m.exec(block)?.[1] ?? "{}";
    return { event, data: JSON.parse(data) };
  });
}
