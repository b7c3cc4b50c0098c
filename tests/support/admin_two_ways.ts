/**
 * @module The admin CLI two ways for comparing them: on a store file of its own, and through a running
 * gateway's admin API, plus a command posted to that API directly.
 */
import { adminCli, type GatewayProcess, startGateway } from "./processes.ts";
import { ADMIN_TOKEN } from "./admin_session.ts";
import { COMMANDS_PATH } from "../../lib/admin/http_wire.ts";

export type Run = Awaited<ReturnType<typeof adminCli>>;

/**
 * A gateway process with the admin token on its own store, and the two ways to run a command: on a store file
 * of its own (`local`), and through the gateway (`remote`). The remote CLI is given a store it cannot open,
 * so it works only if it never opens one.
 */
export class TwoWays {
  private constructor(readonly dir: string, readonly gw: GatewayProcess) {}

  static async start(env: Record<string, string> = { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN }): Promise<TwoWays> {
    const dir = await Deno.makeTempDir();
    try {
      return new TwoWays(dir, await startGateway({ GATEWAY_KV: `${dir}/gateway.kv`, ...env }));
    } catch (error) {
      await Deno.remove(dir, { recursive: true });
      throw error;
    }
  }

  local(args: string[]): Promise<Run> {
    return adminCli({ GATEWAY_KV: `${this.dir}/local.kv`, GATEWAY_ADMIN_TOKEN: "" }, args);
  }

  remote(args: string[], env: Record<string, string> = { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN }): Promise<Run> {
    return adminCli({ GATEWAY_KV: `${this.dir}/absent/store.kv`, ...env }, [
      "--gateway",
      this.gw.url,
      ...args,
    ]);
  }

  /** A command through the API itself, as a script would send it. */
  post(argv: unknown, headers: Record<string, string> = { Authorization: `Bearer ${ADMIN_TOKEN}` }) {
    return fetch(`${this.gw.url}${COMMANDS_PATH}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ argv }),
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.gw.stop();
    await Deno.remove(this.dir, { recursive: true });
  }
}
