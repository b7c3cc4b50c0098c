/**
 * @module Test support: runs admin commands in-process against an in-memory store and checks the output
 * contract (one JSON value on stdout; one line on stderr on failure) on every call, so each test need not.
 */
import assert from "node:assert/strict";
import { runAdmin } from "../../lib/admin/cli.ts";

export interface AdminRun {
  code: number;
  out: string[];
  err: string[];
}

export class AdminHarness {
  /** The clock the commands see; tests move it to make keys expire. */
  now = new Date("2026-11-22T12:00:00.000Z");

  private constructor(readonly kv: Deno.Kv) {}

  static async open(): Promise<AdminHarness> {
    return new AdminHarness(await Deno.openKv(":memory:"));
  }

  async run(...args: string[]): Promise<AdminRun> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(args, {
      kv: this.kv,
      out: (s) => out.push(s),
      err: (s) => err.push(s),
      now: () => this.now,
    });
    return { code, out, err };
  }

  /** Runs with `--json`, expects success, and returns the single JSON value printed. */
  // deno-lint-ignore no-explicit-any
  async json(...args: string[]): Promise<any> {
    const { code, out, err } = await this.run(...args, "--json");
    assert.deepEqual(err, [], `unexpected stderr for ${args.join(" ")}`);
    assert.equal(code, 0);
    assert.equal(out.length, 1);
    return JSON.parse(out[0]);
  }

  /** Runs without `--json`, expects success, and returns the human text. */
  async human(...args: string[]): Promise<string> {
    const { code, out, err } = await this.run(...args);
    assert.deepEqual(err, [], `unexpected stderr for ${args.join(" ")}`);
    assert.equal(code, 0);
    assert.equal(out.length, 1);
    return out[0];
  }

  /** Expects failure with `code`, nothing on stdout and one line on stderr; returns that line. */
  async fails(code: number, ...args: string[]): Promise<string> {
    const run = await this.run(...args);
    assert.deepEqual(run.out, [], `unexpected stdout for ${args.join(" ")}`);
    assert.equal(run.err.length, 1);
    assert.doesNotMatch(run.err[0], /\n/);
    assert.doesNotMatch(run.err[0], /\bat .*\.ts:\d+/);
    assert.equal(run.code, code, run.err[0]);
    return run.err[0];
  }

  [Symbol.dispose](): void {
    this.kv.close();
  }
}
