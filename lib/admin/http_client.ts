/**
 * @module The admin CLI run with `--gateway`: it sends the command line, unparsed, to the gateway's admin API
 * and prints what comes back, so the gateway's `runCommandLine` decides everything a command prints and exits
 * with. What only this side can know (the gateway unreachable, the token refused, an answer that is not the
 * API's) is one line on stderr and exit 1.
 */
import { CommandFailure, COMMANDS_PATH, CommandSuccess, ErrorAnswer } from "./http_wire.ts";
import type { GatewayTarget } from "./gateway_target.ts";

/** Longer than any admin command takes; a gateway that has not answered by then is not going to. */
const ANSWER_TIMEOUT_MS = 60_000;

export interface RemoteIo {
  out: (text: string) => void;
  err: (text: string) => void;
  fetch?: typeof fetch;
}

/** The gateway as the operator named it, for messages. */
function shown(base: URL): string {
  return base.href.replace(/\/$/, "");
}

async function readAnswer(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Runs `args` on the gateway; returns the exit status, as the CLI on the store would. */
export async function runRemote(args: string[], target: GatewayTarget, io: RemoteIo): Promise<number> {
  const url = new URL(COMMANDS_PATH.slice(1), target.base);
  const fail = (line: string) => (io.err(`admin: ${line}`), 1);
  let response: Response;
  let body: unknown;
  try {
    response = await (io.fetch ?? fetch)(url, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${target.token}`,
        "Content-Type": "application/json",
        Accept: "application/json",
      },
      body: JSON.stringify({ argv: args }),
      // A redirect would resend the token, or turn the POST into a GET; the operator should know the address.
      redirect: "manual",
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    });
    body = await readAnswer(response);
  } catch (error) {
    const reason = (error as Error).name === "TimeoutError"
      ? `no answer within ${ANSWER_TIMEOUT_MS / 1000} s`
      : (error as Error).message.split("\n", 1)[0];
    return fail(`cannot reach the gateway at ${shown(target.base)}: ${reason}`);
  }
  const success = CommandSuccess.safeParse(body);
  if (response.ok && success.success) {
    io.out(success.data.stdout);
    return 0;
  }
  const failure = CommandFailure.safeParse(body);
  if (!response.ok && failure.success) {
    io.err(failure.data.stderr);
    return failure.data.exitCode;
  }
  const where = `the gateway at ${shown(target.base)}`;
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get("location");
    return fail(`${where} redirects (${response.status}) to ${location ?? "elsewhere"}: give that address`);
  }
  if (response.status === 401) {
    return fail(`${where} does not take this admin token (401): check --token or GATEWAY_ADMIN_TOKEN`);
  }
  const error = ErrorAnswer.safeParse(body);
  if (error.success) return fail(`${where} refused (${response.status}): ${error.data.error.message}`);
  return fail(`${where} answered ${response.status}, not with the admin API's answer`);
}
