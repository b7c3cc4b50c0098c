/**
 * @module A `Deno.Kv` whose calls are counted: `counted(kv, heard)` hands `heard` the name of every read or
 * write (`get`, `getMany`, `set`, `delete`, `list`, `enqueue`, `watch`, and `commit` once per atomic
 * operation, at its commit), for tests and benches that check how many store round trips something costs.
 */

const CALLS = new Set(["get", "getMany", "set", "delete", "list", "enqueue", "watch"]);

export function counted(kv: Deno.Kv, heard: (call: string) => void): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => {
            heard("commit");
            return commit();
          };
          return op;
        };
      }
      return (...args: unknown[]) => {
        if (CALLS.has(String(prop))) heard(String(prop));
        return value.apply(target, args);
      };
    },
  });
}
