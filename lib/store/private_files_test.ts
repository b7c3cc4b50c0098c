import assert from "node:assert/strict";
import { openStore } from "./kv.ts";

const modeOf = (path: string) => (Deno.statSync(path).mode! & 0o777).toString(8);

Deno.test("store on disk: its new folder is 0700 and its files 0600 whatever the umask, the log made anew too", async () => {
  const root = await Deno.makeTempDir();
  const before = Deno.umask(0o022);
  try {
    const path = `${root}/data/nested/gateway.kv`;
    const kv = await openStore(path);
    await kv.set(["servers", "a"], { apiKey: "sk-secret" });
    assert.equal(modeOf(`${root}/data`), "700");
    assert.equal(modeOf(`${root}/data/nested`), "700");
    for (const file of ["gateway.kv", "gateway.kv-wal", "gateway.kv-shm"]) {
      assert.equal(modeOf(`${root}/data/nested/${file}`), "600", file);
    }
    kv.close();
    // Closed, SQLite removes its log; the next open makes it again, and it must be as private.
    for (const file of ["gateway.kv-wal", "gateway.kv-shm"]) {
      await Deno.remove(`${root}/data/nested/${file}`).catch(() => {});
    }
    const again = await openStore(path);
    await again.set(["servers", "b"], { apiKey: "sk-other" });
    for (const file of ["gateway.kv", "gateway.kv-wal", "gateway.kv-shm"]) {
      assert.equal(modeOf(`${root}/data/nested/${file}`), "600", `${file} after reopening`);
    }
    again.close();
  } finally {
    Deno.umask(before);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("store on disk: a folder that existed is left as its owner made it", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.chmod(root, 0o750);
    const kv = await openStore(`${root}/gateway.kv`);
    kv.close();
    assert.equal(modeOf(root), "750");
    assert.equal(modeOf(`${root}/gateway.kv`), "600");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
