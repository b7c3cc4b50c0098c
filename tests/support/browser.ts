/**
 * A headless Chromium for end-to-end tests: the test starts Debian's browser itself (so it can stop it by
 * PID) and drives it over the DevTools protocol with playwright-core.
 */
import { type Browser, chromium } from "playwright-core";

const CANDIDATES = [Deno.env.get("CHROMIUM_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser"];

function executable(): string {
  for (const path of CANDIDATES) {
    try {
      if (path && Deno.statSync(path).isFile) return path;
    } catch { /* try the next one */ }
  }
  throw new Error(
    "Chromium not found: install Debian's chromium package (.ci/run does) or set CHROMIUM_PATH",
  );
}

export class HeadlessChromium {
  private constructor(
    readonly browser: Browser,
    private readonly child: Deno.ChildProcess,
    private readonly profile: string,
  ) {}

  static async launch(): Promise<HeadlessChromium> {
    const profile = await Deno.makeTempDir({ prefix: "gateway-e2e-" });
    const child = new Deno.Command(executable(), {
      args: [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        `--user-data-dir=${profile}`,
        "about:blank",
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    try {
      const endpoint = await devtoolsEndpoint(child.stderr);
      return new HeadlessChromium(await chromium.connectOverCDP(endpoint), child, profile);
    } catch (error) {
      child.kill("SIGKILL");
      await child.status;
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.browser.close().catch(() => {});
    try {
      this.child.kill("SIGKILL");
    } catch { /* already gone */ }
    await this.child.status;
    await Deno.remove(this.profile, { recursive: true }).catch(() => {});
  }
}

/** Chromium prints its DevTools address on stderr; the rest of stderr is drained so it never blocks. */
async function devtoolsEndpoint(stderr: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stderr.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
    const match = seen.match(/DevTools listening on (ws:\/\/\S+)/);
    if (match) {
      (async () => {
        while (!(await reader.read().catch(() => ({ done: true }))).done) { /* drain */ }
      })();
      return match[1];
    }
  }
  throw new Error(`Chromium did not start:\n${seen.slice(-2000)}`);
}
