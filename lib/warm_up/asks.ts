/**
 * @module The chats a warm-up sends: each round, one of each format (A: chat completions, B: Ollama's chat)
 * streamed and whole, shaped as the official clients send them (the OpenAI SDK, the ollama package), varied
 * from round to round as real traffic varies (an output ceiling or not, usage in the stream or not, a system
 * message or not).
 */

export interface WarmUpAsk {
  path: string;
  body: string;
}

const QUESTIONS = ["Say hello.", "What is the capital of France?", "Write a haiku about autumn."];

function messages(round: number) {
  const user = { role: "user", content: QUESTIONS[round % QUESTIONS.length] };
  return round % 2 ? [{ role: "system", content: "You are a helpful assistant." }, user] : [user];
}

export function warmUpAsks(round: number): WarmUpAsk[] {
  const model = "any";
  const msgs = messages(round);
  const ceiling = round % 3 === 0 ? { max_tokens: 6 } : {};
  const predict = round % 3 === 0 ? { options: { num_predict: 6 } } : {};
  const usage = round % 2 ? { stream_options: { include_usage: true } } : {};
  return [
    {
      path: "/v1/chat/completions",
      body: JSON.stringify({ model, messages: msgs, stream: true, ...usage, ...ceiling }),
    },
    { path: "/v1/chat/completions", body: JSON.stringify({ model, messages: msgs, ...ceiling }) },
    { path: "/api/chat", body: JSON.stringify({ model, messages: msgs, stream: true, ...predict }) },
    { path: "/api/chat", body: JSON.stringify({ model, messages: msgs, stream: false, ...predict }) },
  ];
}
