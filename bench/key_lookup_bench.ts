/**
 * Authentication lookup cost with 10 keys vs 100,000 keys in the store: the uncached path (one indexed read of
 * the digest index), on the embedded SQLite store. Run with `deno task bench`.
 */
import { createKey, findKeyByDigest } from "../lib/store/keys.ts";
import { digestSecret } from "../lib/store/key_secret.ts";
import { basePolicy } from "../lib/store/records.ts";
import { fillKeys } from "../tests/support/fill_keys.ts";

const dirs: string[] = [];
globalThis.addEventListener("unload", () => {
  for (const dir of dirs) Deno.removeSync(dir, { recursive: true });
});

async function storeWith(n: number) {
  const dir = await Deno.makeTempDir();
  dirs.push(dir);
  const kv = await Deno.openKv(`${dir}/bench.kv`);
  await fillKeys(kv, n);
  const { secret } = await createKey(kv, basePolicy("m1"));
  return { kv, digest: await digestSecret(secret) };
}

const small = await storeWith(10);
const large = await storeWith(100_000);

Deno.bench("key lookup, 10 keys", { group: "lookup", baseline: true }, async () => {
  if (!(await findKeyByDigest(small.kv, small.digest))) throw new Error("missing");
});

Deno.bench("key lookup, 100,000 keys", { group: "lookup" }, async () => {
  if (!(await findKeyByDigest(large.kv, large.digest))) throw new Error("missing");
});

Deno.bench("digest + lookup, 100,000 keys", { group: "lookup" }, async () => {
  if (!(await findKeyByDigest(large.kv, await digestSecret("filler-99999")))) throw new Error("missing");
});
