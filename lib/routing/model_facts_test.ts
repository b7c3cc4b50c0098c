import assert from "node:assert/strict";
import { ollamaModelFacts, openaiModelFacts } from "./model_facts.ts";

Deno.test("model facts: an Ollama tags entry is read field by field", () => {
  const facts = ollamaModelFacts({
    name: "llama3.2:3b",
    modified_at: "2026-01-01T00:00:00Z",
    size: 2_019_393_189,
    digest: "a80c4f17",
    details: {
      format: "gguf",
      family: "llama",
      families: ["llama"],
      parameter_size: "3.2B",
      quantization_level: "Q4_K_M",
    },
  });
  assert.deepEqual(facts, {
    modifiedAt: "2026-01-01T00:00:00Z",
    sizeBytes: 2_019_393_189,
    digest: "a80c4f17",
    format: "gguf",
    family: "llama",
    families: ["llama"],
    parameterSize: "3.2B",
    quantizationLevel: "Q4_K_M",
    parentModel: undefined,
  });
});

Deno.test("model facts: values of the wrong type, unbounded or unparseable are dropped", () => {
  const facts = ollamaModelFacts({
    modified_at: "yesterday",
    size: -1,
    digest: "x".repeat(10_000),
    details: { family: 42, families: ["ok", 7, "y".repeat(500)], parameter_size: null },
  });
  assert.deepEqual(facts.families, ["ok"]);
  for (const field of ["modifiedAt", "sizeBytes", "digest", "family", "parameterSize"] as const) {
    assert.equal(facts[field], undefined, field);
  }
  assert.deepEqual(ollamaModelFacts(null).families, undefined);
  assert.equal(openaiModelFacts({ id: "m", created: 1_767_225_600 }).modifiedAt, "2026-01-01T00:00:00.000Z");
  assert.equal(openaiModelFacts({ id: "m", created: "soon" }).modifiedAt, undefined);
});
