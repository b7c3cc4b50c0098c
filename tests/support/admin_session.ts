/** Talking to the admin endpoints as a browser or a script would: log in, keep the cookie, read the feed. */
import { EventSourceParserStream } from "eventsource-parser/stream";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

/** Logs in through the form and returns the session cookie (`name=value`) and the raw Set-Cookie header. */
export async function logIn(base: string, token = ADMIN_TOKEN, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/admin/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ token }),
  });
  await response.body?.cancel();
  const setCookie = response.headers.get("set-cookie") ?? "";
  return { response, setCookie, cookie: setCookie.split(";")[0] };
}

export interface FeedEvent {
  event: string;
  data: unknown;
}

/** An open admin feed; `next(match)` waits for the first event that satisfies `match`. */
export class FeedReader {
  readonly #abort = new AbortController();
  #reader?: ReadableStreamDefaultReader<{ event?: string; data: string }>;

  static async open(base: string, headers: Record<string, string>): Promise<FeedReader> {
    const feed = new FeedReader();
    const response = await fetch(`${base}/admin/feed`, { headers, signal: feed.#abort.signal });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`feed answered ${response.status}`);
    }
    feed.#reader = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(
      new EventSourceParserStream(),
    )
      .getReader();
    return feed;
  }

  async next(match: (e: FeedEvent) => boolean, timeoutMs = 5_000): Promise<FeedEvent> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((resolve) =>
        timer = setTimeout(() => resolve("timeout"), deadline - Date.now())
      );
      const read = await Promise.race([this.#reader!.read(), timeout]);
      clearTimeout(timer);
      if (read === "timeout") break;
      if (read.done) throw new Error("the feed ended");
      const event = { event: read.value.event ?? "message", data: JSON.parse(read.value.data) };
      if (match(event)) return event;
    }
    throw new Error(`no matching feed event within ${timeoutMs} ms`);
  }

  close(): void {
    this.#abort.abort();
  }
}

/** The form token the admin page embeds for the session `cookie`. */
export async function formToken(base: string, cookie: string, page = "/admin/keys"): Promise<string> {
  const html = await (await fetch(`${base}${page}`, { headers: { Cookie: cookie } })).text();
  const token = /name="csrf" value="([^"]*)"/.exec(html)?.[1];
  if (!token) throw new Error(`no form token on ${page}`);
  return token;
}

/** Posts a form as the page would (same origin); returns the status and the notice it shows. */
export async function postForm(
  base: string,
  path: string,
  command: string,
  cookie: string,
  fields: Record<string, string> | [string, string][],
  headers: Record<string, string> = {},
) {
  const body = new URLSearchParams(fields);
  body.set("do", command);
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: base,
      Cookie: cookie,
      ...headers,
    },
    body,
  });
  const html = await response.text();
  const notice = /data-notice="(\w+)"[^>]*>([^<]*)</.exec(html);
  return { status: response.status, html, kind: notice?.[1], text: unescapeHtml(notice?.[2] ?? "") };
}

export function unescapeHtml(text: string): string {
  return text.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll(
    "&gt;",
    ">",
  )
    .replaceAll("&amp;", "&");
}
