/**
 * The tool the AI SDK tests hand their model: a city's weather, always 3 °C, run by the SDK itself, so a test
 * can see the SDK parsed the streamed call and ran it with the arguments the gateway passed on.
 */
import { jsonSchema, tool } from "ai";

/** The AI SDK tool `get_weather`; each input it is run with is pushed onto `calls`. */
export const weatherTool = (calls: unknown[]) =>
  tool({
    description: "Weather in a city",
    inputSchema: jsonSchema<{ city: string }>({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    }),
    execute: (input) => {
      calls.push(input);
      return Promise.resolve({ celsius: 3 });
    },
  });
