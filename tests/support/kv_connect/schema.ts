/**
 * @module The KV Connect data path's protobuf messages (package `com.deno.kv.datapath`), declared for
 * protobufjs by field number and type as denokv's published schema gives them. Only the messages the server
 * reads or writes are here; fields it never looks at (enqueues' details, newer watch channel) are left out, and
 * protobufjs skips unknown fields when decoding, as any protobuf reader must.
 */
import protobuf from "protobufjs/light.js";

const bytes = (id: number) => ({ type: "bytes", id });
const repeated = (type: string, id: number) => ({ rule: "repeated", type, id });

const root = protobuf.Root.fromJSON({
  nested: {
    SnapshotRead: { fields: { ranges: repeated("ReadRange", 1) } },
    ReadRange: {
      fields: {
        start: bytes(1),
        end: bytes(2),
        limit: { type: "int32", id: 3 },
        reverse: { type: "bool", id: 4 },
      },
    },
    SnapshotReadOutput: {
      fields: {
        ranges: repeated("ReadRangeOutput", 1),
        readDisabled: { type: "bool", id: 2 },
        readIsStronglyConsistent: { type: "bool", id: 4 },
        status: { type: "int32", id: 8 },
      },
    },
    ReadRangeOutput: { fields: { values: repeated("KvEntry", 1) } },
    KvEntry: {
      fields: { key: bytes(1), value: bytes(2), encoding: { type: "int32", id: 3 }, versionstamp: bytes(4) },
    },
    AtomicWrite: {
      fields: {
        checks: repeated("Check", 1),
        mutations: repeated("Mutation", 2),
        enqueues: repeated("Enqueue", 3),
      },
    },
    Check: { fields: { key: bytes(1), versionstamp: bytes(2) } },
    Mutation: {
      fields: {
        key: bytes(1),
        value: { type: "KvValue", id: 2 },
        mutationType: { type: "int32", id: 3 },
        expireAtMs: { type: "int64", id: 4 },
        sumMin: bytes(5),
        sumMax: bytes(6),
        sumClamp: { type: "bool", id: 7 },
      },
    },
    KvValue: { fields: { data: bytes(1), encoding: { type: "int32", id: 2 } } },
    Enqueue: { fields: { payload: bytes(1) } },
    AtomicWriteOutput: {
      fields: {
        status: { type: "int32", id: 1 },
        versionstamp: bytes(2),
        failedChecks: repeated("uint32", 4),
      },
    },
    Watch: { fields: { keys: repeated("WatchKey", 1) } },
    WatchKey: { fields: { key: bytes(1) } },
    WatchOutput: { fields: { status: { type: "int32", id: 1 }, keys: repeated("WatchKeyOutput", 2) } },
    WatchKeyOutput: {
      fields: { changed: { type: "bool", id: 1 }, entryIfChanged: { type: "KvEntry", id: 2 } },
    },
  },
});

export const messages = {
  SnapshotRead: root.lookupType("SnapshotRead"),
  SnapshotReadOutput: root.lookupType("SnapshotReadOutput"),
  AtomicWrite: root.lookupType("AtomicWrite"),
  AtomicWriteOutput: root.lookupType("AtomicWriteOutput"),
  Watch: root.lookupType("Watch"),
  WatchOutput: root.lookupType("WatchOutput"),
};

export const SnapshotReadStatus = { SUCCESS: 1 } as const;
export const AtomicWriteStatus = { SUCCESS: 1, CHECK_FAILURE: 2 } as const;
export const MutationType = {
  SET: 1,
  DELETE: 2,
  SUM: 3,
  MAX: 4,
  MIN: 5,
  SET_SUFFIX_VERSIONSTAMPED_KEY: 9,
} as const;
export const ValueEncoding = { V8: 1, LE64: 2, BYTES: 3 } as const;

/** A KV entry as it travels: key, value and versionstamp as bytes. */
export interface WireEntry {
  key: Uint8Array;
  value: Uint8Array;
  encoding: number;
  versionstamp: Uint8Array;
}

export interface WireReadRange {
  start: Uint8Array;
  end: Uint8Array;
  limit: number;
  reverse: boolean;
}

export interface WireMutation {
  key: Uint8Array;
  value?: { data: Uint8Array; encoding: number };
  mutationType: number;
  expireAtMs: number | { toNumber(): number };
  sumMin?: Uint8Array;
  sumMax?: Uint8Array;
  sumClamp?: boolean;
}

export interface WireAtomicWrite {
  checks: { key: Uint8Array; versionstamp: Uint8Array }[];
  mutations: WireMutation[];
  enqueues: unknown[];
}

/** Decodes `body` as `type`; a malformed body is the client's error (400), as the protocol asks. */
export function decode<T>(type: protobuf.Type, body: Uint8Array): T {
  try {
    return type.decode(body) as unknown as T;
  } catch (error) {
    throw new BadRequest(`Request protobuf is invalid: ${(error as Error).message}.`);
  }
}

export function encode(type: protobuf.Type, message: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  return type.encode(type.fromObject(message)).finish() as Uint8Array<ArrayBuffer>;
}

/** A request the protocol says to refuse with a 4xx and a plain-text reason. */
export class BadRequest extends Error {
  constructor(message: string, readonly status = 400) {
    super(message);
  }
}
