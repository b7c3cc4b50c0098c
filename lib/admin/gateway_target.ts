/**
 * @module The options that send the admin CLI to a running gateway instead of the store: `--gateway URL` and
 * `--token TOKEN`, before the command (`deno task admin --gateway URL key list`), so that no command's own flag
 * can be taken for them. The token falls back to `GATEWAY_ADMIN_TOKEN`, the variable that sets it on the
 * gateway, so an operator need not put it on a command line, where other users of the machine could see it.
 */
import { UsageError } from "./flags.ts";

export interface GatewayTarget {
  /** The gateway's base address: origin, and the path it is served under, if any, ending in `/`. */
  base: URL;
  token: string;
}

/** What the command line asks for: a gateway (or the store, when `target` is undefined) and the command. */
export interface CliRequest {
  target?: GatewayTarget;
  args: string[];
}

const OPTIONS = ["gateway", "token"] as const;
type Option = typeof OPTIONS[number];

function baseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--gateway must be the gateway's http or https address, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--gateway must be the gateway's http or https address, got ${JSON.stringify(raw)}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new UsageError(`--gateway takes the address alone, without user, query or fragment`);
  }
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  return url;
}

/** Splits the leading `--gateway`/`--token` (as `--x VALUE` or `--x=VALUE`) from the command. */
export function cliRequest(args: string[], envToken: string | undefined): CliRequest {
  const given: Partial<Record<Option, string>> = {};
  let i = 0;
  for (; i < args.length; i++) {
    const match = /^--(gateway|token)(?:=(.*))?$/s.exec(args[i]);
    if (!match) break;
    const option = match[1] as Option;
    if (given[option] !== undefined) throw new UsageError(`--${option} given twice`);
    const value = match[2] ?? args[++i];
    if (value === undefined) throw new UsageError(`--${option} needs a value`);
    if (match[2] === undefined && value.startsWith("-")) {
      throw new UsageError(
        `--${option} needs a value (write --${option}=VALUE for a value starting with "-")`,
      );
    }
    given[option] = value;
  }
  const rest = args.slice(i);
  if (given.gateway === undefined) {
    if (given.token !== undefined) throw new UsageError("--token is for --gateway: the store needs none");
    return { args: rest };
  }
  const token = given.token ?? envToken ?? "";
  if (token.trim() === "") {
    throw new UsageError("--gateway needs the admin token: --token TOKEN, or GATEWAY_ADMIN_TOKEN");
  }
  return { target: { base: baseUrl(given.gateway), token }, args: rest };
}
