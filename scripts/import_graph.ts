/**
 * The imports between the parts of `lib/`, from the runtime's own module graph (`deno info --json`): each
 * top-level folder is a part, and so is each module directly in `lib/`. Prints every edge with its count, the
 * cycles between parts, and each import that points up the layers below; exits 1 on a cycle, and when an
 * upward import is not in `scripts/import_graph_allowed.txt`, the list of those that exist today (shrink it,
 * never grow it).
 *
 * Usage: `deno run -A scripts/import_graph.ts [--quiet]` (part of `deno task check`, quiet).
 */

/**
 * The layers, lowest first: a part may import its own layer and those below. What each holds is in
 * ARCHITECTURE.md.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["errors", "gateway_error", "limit_errors", "chat", "deploy_profile", "runtime"],
  ["log", "store", "audit"],
  ["auth", "policy", "usage", "account", "shape", "routing", "backends", "faces"],
  ["http", "metrics"],
  [
    "config",
    "config_schema",
    "pipeline",
    "discovery",
    "deps",
    "server",
    "gateway",
    "warm_up",
    "admin",
    "admin_web",
  ],
];

const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const allowedFile = `${root}/scripts/import_graph_allowed.txt`;

async function libModules(dir = `${root}/lib`): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...await libModules(path));
    else if (/\.tsx?$/.test(entry.name) && !/_test\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** The part a module belongs to, or undefined outside `lib/` and for tests. */
function partOf(specifier: string): string | undefined {
  const prefix = `file://${root}/lib/`;
  if (!specifier.startsWith(prefix) || /_test\.tsx?$/.test(specifier)) return undefined;
  const [first, ...rest] = specifier.slice(prefix.length).split("/");
  return rest.length ? first : first.replace(/\.tsx?$/, "");
}

interface GraphModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
}

/** Folder-level edges, `from -> to`, with how many module imports make each. */
export async function partEdges(): Promise<Map<string, number>> {
  const entry = await Deno.makeTempFile({ dir: root, prefix: ".import_graph_", suffix: ".ts" });
  try {
    await Deno.writeTextFile(entry, (await libModules()).map((m) => `import "${m}";`).join("\n"));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
    const { modules } = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: GraphModule[] };
    const edges = new Map<string, number>();
    for (const m of modules) {
      const from = partOf(m.specifier);
      if (!from) continue;
      for (const d of m.dependencies ?? []) {
        const to = partOf(d.code?.specifier ?? d.type?.specifier ?? "");
        if (!to || to === from) continue;
        edges.set(`${from} -> ${to}`, (edges.get(`${from} -> ${to}`) ?? 0) + 1);
      }
    }
    return edges;
  } finally {
    await Deno.remove(entry);
  }
}

const layerOf = (part: string) => LAYERS.findIndex((layer) => layer.includes(part));

/** The strongly connected groups of more than one part (Tarjan's algorithm). */
function cycles(edges: Iterable<string>): string[][] {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    const [from, to] = edge.split(" -> ");
    next.set(from, [...next.get(from) ?? [], to]);
    if (!next.has(to)) next.set(to, []);
  }
  let index = 0;
  const seen = new Map<string, { index: number; low: number }>();
  const stack: string[] = [];
  const groups: string[][] = [];
  const visit = (v: string) => {
    seen.set(v, { index, low: index++ });
    stack.push(v);
    for (const w of next.get(v)!) {
      if (!seen.has(w)) {
        visit(w);
        seen.get(v)!.low = Math.min(seen.get(v)!.low, seen.get(w)!.low);
      } else if (stack.includes(w)) seen.get(v)!.low = Math.min(seen.get(v)!.low, seen.get(w)!.index);
    }
    if (seen.get(v)!.low === seen.get(v)!.index) {
      const group: string[] = [];
      for (let w = ""; w !== v;) group.push(w = stack.pop()!);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of next.keys()) if (!seen.has(v)) visit(v);
  return groups;
}

if (import.meta.main) {
  const quiet = Deno.args.includes("--quiet");
  const edges = await partEdges();
  const unplaced = new Set([...edges.keys()].flatMap((e) => e.split(" -> ")).filter((p) => layerOf(p) < 0));
  if (unplaced.size) {
    console.error(`import graph: no layer for ${[...unplaced].join(", ")}: add each to LAYERS`);
    Deno.exit(1);
  }
  const upward = [...edges.keys()].filter((e) => {
    const [from, to] = e.split(" -> ");
    return layerOf(to) > layerOf(from);
  }).sort();
  const allowed = new Set(
    (await Deno.readTextFile(allowedFile)).split("\n").map((l) => l.trim()).filter((l) =>
      l && !l.startsWith("#")
    ),
  );
  if (!quiet) {
    for (const [edge, n] of [...edges].sort()) console.log(`${edge}  (${n})`);
    console.log(
      `\n${edges.size} edges between ${
        new Set([...edges.keys()].flatMap((e) => e.split(" -> "))).size
      } parts`,
    );
    console.log(
      upward.length ? `${upward.length} upward imports:\n  ${upward.join("\n  ")}` : "no upward imports",
    );
  }
  // Within a layer imports may go either way, but not round: a cycle would make two parts one.
  const loops = cycles(edges.keys());
  for (const group of loops) {
    console.error(`import graph: parts that import each other round: ${group.join(", ")}`);
  }
  if (loops.length) Deno.exit(1);
  const fresh = upward.filter((e) => !allowed.has(e));
  const gone = [...allowed].filter((e) => !upward.includes(e));
  if (gone.length) {
    console.error(`import graph: no longer upward, take out of ${allowedFile}: ${gone.join("; ")}`);
  }
  if (fresh.length) {
    console.error(
      `import graph: new upward import(s), against the layers of ARCHITECTURE.md: ${fresh.join("; ")}`,
    );
    Deno.exit(1);
  }
}
