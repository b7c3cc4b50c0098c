/**
 * @module The admin page and its login page, rendered to HTML on the server. The page is complete without
 * JavaScript (the islands render their state at load); the bundle only makes it live.
 */
import type { ComponentChildren, VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import ServerHealth from "./islands/ServerHealth.tsx";
import Usage from "./islands/Usage.tsx";
import { assetUrl } from "../server/static_files.ts";
import { Island } from "./island.tsx";
import type { HealthView, UsageView } from "./shared/views.ts";

const SECURITY_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  // Not "no-referrer": with it a browser sends `Origin: null` on the page's own form posts.
  "Referrer-Policy": "same-origin",
  // Everything the page needs comes from the gateway itself; no inline scripts.
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
};

export function Document(props: { title: string; children: ComponentChildren; script?: boolean }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>{props.title}</title>
        <link rel="icon" type="image/svg+xml" href={assetUrl("/static/favicon.svg")} />
        <link rel="stylesheet" href={assetUrl("/static/admin.css")} />
        {props.script ? <script type="module" src={assetUrl("/static/bundle/islands.js")} /> : null}
      </head>
      <body>{props.children}</body>
    </html>
  );
}

export function htmlResponse(node: VNode, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(`<!DOCTYPE html>${renderToString(node)}`, {
    status,
    headers: { ...SECURITY_HEADERS, ...headers },
  });
}

const SECTIONS: [string, string][] = [
  ["/admin", "Overview"],
  ["/admin/keys", "Keys"],
  ["/admin/servers", "Servers"],
  ["/admin/users", "Users"],
  ["/admin/audit", "Audit"],
  ["/admin/metrics", "Metrics"],
];

/** The bar on every admin page; `current` is the path of the page showing it. */
export function TopBar(props: { current: string }) {
  return (
    <header class="top">
      <h1>Chat gateway</h1>
      <nav>
        {SECTIONS.map(([href, label]) => (
          <a key={href} href={href} aria-current={href === props.current ? "page" : undefined}>{label}</a>
        ))}
        <form method="post" action="/admin/logout">
          <button type="submit">Log out</button>
        </form>
      </nav>
    </header>
  );
}

export function adminPage(health: HealthView, usage: UsageView, charts?: VNode): VNode {
  return (
    <Document title="Gateway admin" script>
      <TopBar current="/admin" />
      <main>
        <Island name="ServerHealth" component={ServerHealth} props={{ initial: health }} />
        {charts}
        <Island name="Usage" component={Usage} props={{ initial: usage }} />
      </main>
    </Document>
  );
}

export function loginPage(message?: string): VNode {
  return (
    <Document title="Gateway admin: log in">
      <main class="login">
        <h1>Chat gateway</h1>
        <form method="post" action="/admin/login" class="panel">
          <label for="token">Admin token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
          {message ? <p class="error" role="alert">{message}</p> : null}
          <button type="submit">Log in</button>
        </form>
      </main>
    </Document>
  );
}

export function closedPage(): VNode {
  return (
    <Document title="Gateway admin: closed">
      <main class="login">
        <h1>Chat gateway</h1>
        <p class="panel">
          The admin page is closed. Start the gateway with <code>GATEWAY_ADMIN_TOKEN</code> set to open it.
        </p>
      </main>
    </Document>
  );
}
