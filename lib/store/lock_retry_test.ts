import assert from "node:assert/strict";
import { openStore } from "./kv.ts";

const script = new URL("../../tests/support/contend_store.ts", import.meta.url).pathname;

Deno.test("three processes doing check-and-set on one store file: no lock errors, no lost update", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/shared.kv`;
  try {
    (await openStore(path)).close();
    const rounds = 300;
    const outputs = await Promise.all([1, 2, 3].map(() =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--unstable-kv",
          "--allow-read",
          "--allow-write",
          "--allow-env",
          script,
          path,
          String(rounds),
        ],
        stdout: "piped",
        stderr: "piped",
      }).output()
    ));
    for (const out of outputs) {
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      assert.equal(new TextDecoder().decode(out.stdout).trim(), "0", new TextDecoder().decode(out.stderr));
    }
    const kv = await openStore(path);
    assert.equal((await kv.get<Deno.KvU64>(["count"])).value?.value, BigInt(3 * rounds));
    kv.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
