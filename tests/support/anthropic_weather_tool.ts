/**
 * @module The tool the Anthropic SDK tests offer their model: `get_weather`, in Anthropic's shape.
 */
import type Anthropic from "@anthropic-ai/sdk";

export const WEATHER_TOOL: Anthropic.Tool = {
  name: "get_weather",
  description: "Weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
