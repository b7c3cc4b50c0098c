/** Regenerates routes.gen.ts from the files under routes/. */
import { listRouteFiles, MANIFEST_FILE, renderManifest } from "../lib/server/manifest.ts";

const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const text = renderManifest(await listRouteFiles(root));
await Deno.writeTextFile(`${root}/${MANIFEST_FILE}`, text);
console.log(`wrote ${MANIFEST_FILE}`);
