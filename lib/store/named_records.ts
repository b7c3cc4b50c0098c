/**
 * @module Create/read/update/delete for records addressed by a unique name (servers, clusters, users).
 * Every write bumps the store generation in the same commit, so running gateways notice it.
 */
import { bumpGeneration } from "./kv.ts";
import { RecordError } from "./record_error.ts";

export interface NamedRecord {
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** Extra conditions a write must hold to: e.g. the servers a cluster names must still exist. */
export type Guard = (op: Deno.AtomicOperation) => Promise<void> | void;

export class NamedRecords<T extends NamedRecord> {
  constructor(private readonly kv: Deno.Kv, private readonly prefix: string, private readonly noun: string) {}

  private key(name: string): Deno.KvKey {
    return [this.prefix, name];
  }

  async get(name: string): Promise<T> {
    const entry = await this.kv.get<T>(this.key(name));
    if (!entry.value) throw new RecordError(`No ${this.noun} named ${JSON.stringify(name)}`);
    return entry.value;
  }

  async list(): Promise<T[]> {
    const out: T[] = [];
    for await (const entry of this.kv.list<T>({ prefix: [this.prefix] })) out.push(entry.value);
    return out;
  }

  async add(fields: Omit<T, "createdAt" | "updatedAt">, guard?: Guard, now = new Date()): Promise<T> {
    const stamp = now.toISOString();
    const record = { ...fields, createdAt: stamp, updatedAt: stamp } as T;
    const op = this.kv.atomic().check({ key: this.key(record.name), versionstamp: null }).set(
      this.key(record.name),
      record,
    );
    await guard?.(op);
    if (!(await bumpGeneration(op).commit()).ok) {
      const exists = (await this.kv.get(this.key(record.name))).value !== null;
      throw new RecordError(
        exists
          ? `A ${this.noun} named ${JSON.stringify(record.name)} already exists`
          : `The ${this.noun} changed what it refers to while being written; try again`,
      );
    }
    return record;
  }

  async update(
    name: string,
    change: (current: T) => T,
    guard?: Guard,
    now = new Date(),
  ): Promise<T> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const entry = await this.kv.get<T>(this.key(name));
      if (!entry.value) throw new RecordError(`No ${this.noun} named ${JSON.stringify(name)}`);
      const next = { ...change(entry.value), name, updatedAt: now.toISOString() };
      const op = this.kv.atomic().check(entry).set(this.key(name), next);
      await guard?.(op);
      if ((await bumpGeneration(op).commit()).ok) return next;
    }
    throw new RecordError(
      `The ${this.noun} ${JSON.stringify(name)} is being changed concurrently; try again`,
    );
  }

  async remove(name: string, guard?: Guard): Promise<T> {
    const entry = await this.kv.get<T>(this.key(name));
    if (!entry.value) throw new RecordError(`No ${this.noun} named ${JSON.stringify(name)}`);
    const op = this.kv.atomic().check(entry).delete(this.key(name));
    await guard?.(op);
    if (!(await bumpGeneration(op).commit()).ok) {
      throw new RecordError(
        `The ${this.noun} ${JSON.stringify(name)} changed while being removed; try again`,
      );
    }
    return entry.value;
  }
}
