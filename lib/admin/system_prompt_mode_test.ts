/** @module `--system-prompt-mode` on `key create` / `key update`, through `runAdmin`, down to the stored key. */
import assert from "node:assert/strict";
import { getKey } from "../store/keys.ts";
import { AdminHarness } from "../../tests/support/admin_harness.ts";

Deno.test("--system-prompt-mode: replace is stored, prepend clears it, anything else is refused", async () => {
  using admin = await AdminHarness.open();
  await admin.json("server", "add", "--name", "gpu1", "--url", "http://gpu1:11434", "--model", "llama3");
  const created = await admin.json(
    ...[
      "key",
      "create",
      "--model",
      "llama3",
      "--system-prompt",
      "Be terse.",
      "--system-prompt-mode",
      "replace",
    ],
  );
  assert.equal(created.systemPromptMode, "replace");
  assert.equal((await getKey(admin.kv, created.id)).systemPromptMode, "replace");

  await admin.json("key", "update", created.id, "--system-prompt-mode", "prepend");
  assert.equal("systemPromptMode" in await getKey(admin.kv, created.id), false, "prepend is the default");

  const message = await admin.fails(2, "key", "update", created.id, "--system-prompt-mode", "append");
  assert.match(message, /--system-prompt-mode must be prepend or replace, got "append"/);
  assert.equal("systemPromptMode" in await getKey(admin.kv, created.id), false);
});
