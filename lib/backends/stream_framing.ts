/**
 * @module Cutting a backend's decoded body into payloads: NDJSON lines (Ollama) or SSE events' data
 * (OpenAI-compatible servers), each keeping what is not complete yet for the next piece.
 */
import { createParser } from "eventsource-parser";

export interface Framing {
  /** The payloads that `text` completes, in order. */
  push(text: string): string[];
  /** What is left once the body has ended. */
  end(): string[];
}

/** NDJSON framing: lines (LF or CRLF); a last line without a newline is still delivered. */
export function lineFraming(): Framing {
  let rest = "";
  return {
    push(text) {
      const parts = (rest + text).split("\n");
      rest = parts.pop()!;
      for (let i = 0; i < parts.length; i++) {
        if (parts[i].endsWith("\r")) parts[i] = parts[i].slice(0, -1);
      }
      return parts;
    },
    end() {
      const last = rest;
      rest = "";
      return last ? [last] : [];
    },
  };
}

/** SSE framing: each event's data. An event the body ends in the middle of is not delivered. */
export function sseFraming(): Framing {
  let done: string[] = [];
  const parser = createParser({ onEvent: (event) => done.push(event.data) });
  return {
    push(text) {
      parser.feed(text);
      const out = done;
      done = [];
      return out;
    },
    end: () => [],
  };
}
