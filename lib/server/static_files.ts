/**
 * @module The files under static/ (the admin page's stylesheet and its bundled islands), read once and served
 * from memory. Pages link them with a content hash in the query, so browsers may cache them for good and
 * still see a new version at once.
 */
import { createHash } from "node:crypto";

const ROOT = new URL("../../static/", import.meta.url);

const TYPES: Record<string, string> = {
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
};

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  hash: string;
}

let assets: Map<string, Asset> | undefined;

function load(): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const walk = (dir: URL, prefix: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      if (entry.isDirectory) walk(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`);
      const type = TYPES[entry.name.split(".").pop() ?? ""];
      if (!entry.isFile || !type) continue;
      const body = Deno.readFileSync(new URL(entry.name, dir));
      out.set(`/static/${prefix}${entry.name}`, {
        body,
        type,
        hash: createHash("sha256").update(body).digest("hex").slice(0, 12),
      });
    }
  };
  walk(ROOT, "");
  return out;
}

function table(): Map<string, Asset> {
  return assets ??= load();
}

/** The path to link from a page: `/static/admin.css?v=<hash>`. */
export function assetUrl(path: string): string {
  const asset = table().get(path);
  return asset ? `${path}?v=${asset.hash}` : path;
}

export function staticResponse(path: string, request: Request): Response | undefined {
  const asset = table().get(path);
  if (!asset) return undefined;
  const etag = `"${asset.hash}"`;
  const headers = {
    "Content-Type": asset.type,
    "Cache-Control": "public, max-age=31536000, immutable",
    "ETag": etag,
    "X-Content-Type-Options": "nosniff",
  };
  if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
  return new Response(request.method === "HEAD" ? null : asset.body, { headers });
}
