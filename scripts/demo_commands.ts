/**
 * The ready-to-paste commands `deno task demo` prints: curl in both client formats, whole and streamed, and the
 * official clients (the OpenAI SDK for format A, the ollama client for format B) run by a Deno fetched from npm,
 * so a machine with only Node and npm can run every one of them.
 */

export interface DemoCommand {
  title: string;
  /** One shell command; may span lines with a trailing backslash. */
  command: string;
}

/** What every command asks; the demo backend's answer quotes it. */
export const DEMO_QUESTION = "Hello!";

const DENO = "npx --yes deno@2.9.6";

/** Single-quotes `text` for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}

function curl(url: string, key: string, body: Record<string, unknown>, streamed: boolean): string {
  return [
    `curl -sS${streamed ? " -N" : ""} ${url} \\`,
    `  -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" \\`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join("\n");
}

function denoEval(code: string[]): string {
  return `${DENO} eval ${shellQuote(code.join(" "))}`;
}

export function demoCommands(baseUrl: string, key: string): DemoCommand[] {
  const messages = [{ role: "user", content: DEMO_QUESTION }];
  const a = `${baseUrl}/v1/chat/completions`;
  const b = `${baseUrl}/v1/chat.php`;
  const ask = `messages: [{ role: "user", content: ${JSON.stringify(DEMO_QUESTION)} }]`;
  const openai = [
    `import OpenAI from "npm:openai@7.55.0";`,
    `const client = new OpenAI({ apiKey: "${key}", baseURL: "${baseUrl}/v1" });`,
  ];
  // ollama-js posts to {host}/api/chat, which the gateway answers as Ollama does: the host is all it needs.
  const ollama = [
    `import { Ollama } from "npm:ollama@0.6.4";`,
    `const ollama = new Ollama({ host: "${baseUrl}", headers: { Authorization: "Bearer ${key}" } });`,
  ];
  return [
    {
      title: "Format A (OpenAI chat-completions), whole answer",
      command: curl(a, key, { model: "any", messages }, false),
    },
    {
      title: "Format A, streamed (Server-Sent Events)",
      command: curl(a, key, { model: "any", messages, stream: true }, true),
    },
    {
      title: "Format B (Ollama chat), whole answer",
      command: curl(b, key, { model: "any", messages }, false),
    },
    {
      title: "Format B, streamed (NDJSON)",
      command: curl(b, key, { model: "any", messages, stream: true }, true),
    },
    {
      title: "OpenAI SDK (format A), whole answer",
      command: denoEval([
        ...openai,
        `const answer = await client.chat.completions.create({ model: "any", ${ask} });`,
        `console.log(answer.choices[0].message.content);`,
      ]),
    },
    {
      title: "OpenAI SDK, streamed",
      command: denoEval([
        ...openai,
        `const stream = await client.chat.completions.create({ model: "any", stream: true, ${ask} });`,
        `for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? "");`,
        `console.log();`,
      ]),
    },
    {
      title: "ollama client (format B), whole answer",
      command: denoEval([
        ...ollama,
        `const answer = await ollama.chat({ model: "any", ${ask} });`,
        `console.log(answer.message.content);`,
      ]),
    },
    {
      title: "ollama client, streamed",
      command: denoEval([
        ...ollama,
        `const stream = await ollama.chat({ model: "any", stream: true, ${ask} });`,
        `for await (const part of stream) process.stdout.write(part.message.content);`,
        `console.log();`,
      ]),
    },
  ];
}
