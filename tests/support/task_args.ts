/**
 * @module The command a `deno.json` task runs, for tests that start the gateway as that task does.
 */
import assert from "node:assert/strict";

const root = new URL("../..", import.meta.url);

/** The command a `deno.json` task runs, without the task runner (killing it after a failure kills the gateway). */
export async function taskArgs(task: string): Promise<string[]> {
  const { tasks } = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const [deno, ...args] = (tasks[task] as string).split(/\s+/);
  assert.equal(deno, "deno");
  return args;
}
