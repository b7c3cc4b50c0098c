/**
 * The admin page's parts import one way: the server (this folder) and the browser (`client/`) both use the
 * islands and `shared/`, which use neither; the server knows the browser's code only as the bundle's URL and
 * the islands' names. So the bundle holds no server module, and a browser API never runs on the server.
 */
import assert from "node:assert/strict";

const here = new URL("./", import.meta.url);
const root = new URL("../../", here);

type Side = "server" | "client" | "islands" | "shared";

/** The side of an admin page module, or undefined for any other module. */
function sideOf(specifier: string): Side | undefined {
  if (!specifier.startsWith(here.href)) return undefined;
  const first = specifier.slice(here.href.length).split("/")[0];
  return first === "client" || first === "islands" || first === "shared" ? first : "server";
}

const MAY_IMPORT: Record<Side, Side[]> = {
  server: ["server", "islands", "shared"],
  client: ["client", "islands", "shared"],
  islands: ["islands", "shared"],
  shared: ["shared"],
};

interface GraphModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
}

async function modules(dir = here): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) out.push(...await modules(url));
    else if (/\.tsx?$/.test(entry.name) && !/_test\.tsx?$/.test(entry.name)) out.push(url.href);
  }
  return out;
}

/** Every module the given ones reach, from the runtime's own module graph. */
async function graph(entries: string[]): Promise<GraphModule[]> {
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(entry, entries.map((m) => `import "${m}";`).join("\n"));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", new URL("deno.json", root).pathname, entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    return (JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: GraphModule[] }).modules;
  } finally {
    await Deno.remove(entry);
  }
}

Deno.test("the admin page's server, client, islands and shared code import only the way the split allows", async () => {
  const wrong: string[] = [];
  for (const m of await graph(await modules())) {
    const from = sideOf(m.specifier);
    if (!from) continue;
    for (const d of m.dependencies ?? []) {
      const to = sideOf(d.code?.specifier ?? d.type?.specifier ?? "");
      if (to && !MAY_IMPORT[from].includes(to)) wrong.push(`${from} ${m.specifier} -> ${to}`);
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("the browser bundle's sources are the client, the islands and shared code only", async () => {
  const entry = new URL("client/browser_entry.ts", here).href;
  const byUrl = new Map((await graph([entry])).map((m) => [m.specifier, m]));
  const reached = new Set<string>();
  // Type-only imports leave no code in the bundle; follow what runs.
  const visit = (url: string) => {
    if (reached.has(url)) return;
    reached.add(url);
    for (const d of byUrl.get(url)?.dependencies ?? []) if (d.code) visit(d.code.specifier);
  };
  visit(entry);
  const project = [...reached].filter((url) => url.startsWith(root.href));
  assert.ok(project.length > 4, "the graph reaches the islands");
  assert.deepEqual(project.filter((url) => !["client", "islands", "shared"].includes(sideOf(url)!)), []);
});
