/**
 * How FakeOpenAI puts a streamed answer on the wire, as vLLM does: server-sent events carrying
 * `chat.completion.chunk`s, tool calls streamed in argument fragments, an optional usage chunk and the
 * `[DONE]` marker. Apart from the answer itself because this is where an adapter's SSE reading is tested
 * hardest, and the pacing and faults of the stream are FakeBackendBase's.
 */
import type { StreamPlan } from "./fake_base.ts";
import { pieces } from "./fake_base.ts";

type Json = Record<string, unknown>;

/** A tool call of the answer, its arguments already the JSON string the wire carries. */
export interface WireCall {
  id: string;
  name: string;
  args: string;
}

/** Splits a tool call's JSON arguments the way a tool parser streams them: in a few uneven pieces. */
function fragments(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const sse = (payload: unknown) =>
  `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;

/** The answer's deltas in vLLM's order: reasoning and content word by word, then each call in fragments. */
export function answerDeltas(
  reasoning: { field: string; text: string },
  content: string,
  calls: WireCall[],
): Json[] {
  const deltas: Json[] = [];
  for (const piece of pieces(reasoning.text)) deltas.push({ [reasoning.field]: piece });
  for (const piece of pieces(content)) deltas.push({ content: piece });
  calls.forEach((c, index) => {
    deltas.push({
      tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }],
    });
    for (const part of fragments(c.args)) {
      deltas.push({ tool_calls: [{ index, function: { arguments: part } }] });
    }
  });
  return deltas;
}

/**
 * Streams as vLLM does: a role-only opening chunk, the deltas one per event, the finish reason (riding on the
 * last delta when generation hit the token limit, else on an empty delta of its own, as after an EOS token),
 * the usage chunk with empty choices when asked for, and `data: [DONE]`. The opening chunk and everything
 * after the deltas are framing, so `streamFault.after` means the same as with FakeOllama.
 */
export function ssePlan(head: Json, deltas: Json[], finish: string, usage?: Json): StreamPlan {
  const chunk = (delta: Json, finishReason: string | null = null) => ({
    ...head,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const finishOnLast = finish === "length" && deltas.length > 0;
  const closing: string[] = [];
  if (!finishOnLast) closing.push(sse(chunk({ content: "" }, finish)));
  if (usage) closing.push(sse({ ...head, object: "chat.completion.chunk", choices: [], usage }));
  closing.push(sse("[DONE]"));
  return {
    contentType: "text/event-stream; charset=utf-8",
    opening: sse(chunk({ role: "assistant", content: "" })),
    chunks: deltas.map((delta, i) =>
      sse(chunk(delta, i === deltas.length - 1 && finishOnLast ? finish : null))
    ),
    closing,
    faults: {
      garbage: [sse("}}not json{{")],
      // vLLM reports a failure inside the stream this way, then still ends it with [DONE].
      "error-line": [
        sse({
          error: {
            message: "CUDA error: out of memory",
            type: "InternalServerError",
            param: null,
            code: 500,
          },
        }),
        sse("[DONE]"),
      ],
    },
  };
}
