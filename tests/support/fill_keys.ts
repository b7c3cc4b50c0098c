/** Fills a store with `n` key records laid out as createKey writes them, in large batches (far faster than n commits). */
import { digestSecret } from "../../lib/store/key_secret.ts";
import { KV_KEYS } from "../../lib/store/kv.ts";
import { basePolicy, type KeyRecord } from "../../lib/store/records.ts";

export async function fillKeys(kv: Deno.Kv, n: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    const op = kv.atomic();
    for (let j = i; j < Math.min(n, i + 500); j++) {
      const digest = await digestSecret(`filler-${j}`);
      const record: KeyRecord = {
        ...basePolicy("m1"),
        id: `key_f${j}`,
        digest,
        hint: "f",
        createdAt: "",
        updatedAt: "",
      };
      op.set([KV_KEYS.keys, record.id], record).set([KV_KEYS.keysByDigest, digest], record);
    }
    await op.commit();
  }
}
