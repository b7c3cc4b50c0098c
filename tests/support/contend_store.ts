/**
 * Run as a separate process by the store contention test: check-and-set commits on a shared counter file, the
 * pattern that makes SQLite answer "database is locked" across processes. Prints its failure count.
 */
import { openStore } from "../../lib/store/kv.ts";

const [path, rounds] = Deno.args;
const kv = await openStore(path);
let failures = 0;
for (let i = 0; i < Number(rounds); i++) {
  try {
    for (;;) {
      const current = await kv.get<Deno.KvU64>(["count"]);
      const next = (current.value?.value ?? 0n) + 1n;
      if ((await kv.atomic().check(current).set(["count"], new Deno.KvU64(next)).commit()).ok) break;
    }
  } catch (error) {
    failures++;
    console.error(String(error));
  }
}
kv.close();
console.log(failures);
