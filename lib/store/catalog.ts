/**
 * @module The admin's view of the store: servers, clusters, users and keys, with the integrity rules that
 * span them (a cluster names existing servers; a key names an existing cluster and user; nothing in use is
 * removed). The gateway reads through `StoreView` instead.
 */
import { KV_KEYS } from "./kv.ts";
import { NamedRecords } from "./named_records.ts";
import type { ClusterRecord, KeyRecord, ServerRecord, UserRecord } from "./records.ts";
import { RecordError } from "./record_error.ts";
import { listKeys } from "./keys.ts";

export class Catalog {
  readonly servers: NamedRecords<ServerRecord>;
  readonly clusters: NamedRecords<ClusterRecord>;
  readonly users: NamedRecords<UserRecord>;

  constructor(readonly kv: Deno.Kv) {
    this.servers = new NamedRecords(kv, KV_KEYS.servers, "server");
    this.clusters = new NamedRecords(kv, KV_KEYS.clusters, "cluster");
    this.users = new NamedRecords(kv, KV_KEYS.users, "user");
  }

  /** Makes a commit fail unless every named server exists at the moment of the commit. */
  async requireServers(op: Deno.AtomicOperation, names: string[]): Promise<void> {
    for (const name of new Set(names)) {
      const entry = await this.kv.get([KV_KEYS.servers, name]);
      if (!entry.value) throw new RecordError(`No server named ${JSON.stringify(name)}`);
      op.check(entry);
    }
  }

  /** Checks that a key's cluster and user exist (and stay so until the commit). */
  async requireKeyRefs(refs: Pick<KeyRecord, "cluster" | "user">): Promise<void> {
    if (refs.cluster !== undefined) await this.clusters.get(refs.cluster);
    if (refs.user !== undefined) await this.users.get(refs.user);
  }

  async clustersUsingServer(server: string): Promise<string[]> {
    return (await this.clusters.list()).filter((c) => c.servers.includes(server)).map((c) => c.name);
  }

  async activeKeysWhere(pred: (key: KeyRecord) => boolean): Promise<string[]> {
    return (await listKeys(this.kv)).filter((k) => !k.revokedAt && pred(k)).map((k) => k.id);
  }

  async removeServer(name: string): Promise<ServerRecord> {
    const users = await this.clustersUsingServer(name);
    if (users.length) {
      throw new RecordError(`Server ${JSON.stringify(name)} is a member of cluster(s) ${users.join(", ")}`);
    }
    return await this.servers.remove(name);
  }

  async removeCluster(name: string): Promise<ClusterRecord> {
    const keys = await this.activeKeysWhere((k) => k.cluster === name);
    if (keys.length) {
      throw new RecordError(`Cluster ${JSON.stringify(name)} is used by key(s) ${keys.join(", ")}`);
    }
    return await this.clusters.remove(name);
  }

  async removeUser(name: string): Promise<UserRecord> {
    const keys = await this.activeKeysWhere((k) => k.user === name);
    if (keys.length) {
      throw new RecordError(`User ${JSON.stringify(name)} owns key(s) ${keys.join(", ")}`);
    }
    return await this.users.remove(name);
  }
}
