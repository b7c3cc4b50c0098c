import assert from "node:assert/strict";
import { formatLine } from "./line.ts";
import { Logger, safeLocation } from "./mod.ts";

const entry = {
  time: Date.UTC(2026, 10, 25, 15, 0, 0, 123),
  level: "warn" as const,
  event: "server.down",
  message: "gpu1 is down: connection refused",
  fields: { server: "gpu1", reason: "connection refused", models: 2, gone: undefined },
};

Deno.test("log line: text has the time, level, event, sentence and fields, values with spaces quoted", () => {
  assert.equal(
    formatLine(entry, "text"),
    '2026-11-25T15:00:00.123Z WARN  server.down: gpu1 is down: connection refused server=gpu1 reason="connection refused" models=2',
  );
});

Deno.test("log line: JSON is one object per line with the same members; undefined fields left out", () => {
  const line = formatLine({ ...entry, message: "two\nlines" }, "json");
  assert.ok(!line.includes("\n"));
  assert.deepEqual(JSON.parse(line), {
    time: "2026-11-25T15:00:00.123Z",
    level: "warn",
    event: "server.down",
    msg: "two\nlines",
    server: "gpu1",
    reason: "connection refused",
    models: 2,
  });
});

Deno.test("log line: a line break in a text value or sentence stays on one line", () => {
  const line = formatLine({ ...entry, message: "a\nb", fields: { why: "x\ny" } }, "text");
  assert.equal(line.split("\n").length, 1);
  assert.match(line, /why="x\\ny"/);
});

Deno.test("logger: lines below the level are not written", () => {
  const lines: string[] = [];
  const log = new Logger();
  log.configure({ level: "warn", write: (line) => lines.push(line), now: () => 0 });
  log.info("a", "not written");
  log.warn("b", "written");
  log.error("c", "written too");
  assert.deepEqual(lines.map((l) => /^\S+ +\S+ +(\S+):/.exec(l)?.[1]), ["b", "c"]);
  assert.equal(log.enabled("info"), false);
});

Deno.test("safeLocation: a store URL loses its user, password, query and fragment; a path stays", () => {
  assert.equal(
    safeLocation("https://user:pw@kv.example/db/connect?token=secret#x", "d"),
    "https://kv.example/db/connect",
  );
  assert.equal(safeLocation("./data/x.kv", "d"), "./data/x.kv");
  assert.equal(safeLocation(undefined, "./data/gateway.kv"), "./data/gateway.kv");
});

Deno.test("logger: deferred lines are written together, and before any other line", () => {
  const writes: string[] = [];
  const log = new Logger();
  log.configure({ level: "info", write: (text) => writes.push(text), now: () => 0 });
  log.deferred("info", "request", "one");
  log.deferred("info", "request", "two");
  assert.equal(writes.length, 0, "waiting");
  log.warn("server.down", "three");
  assert.equal(writes.length, 2);
  assert.deepEqual(writes[0].split("\n").map((l) => l.slice(-3)), ["one", "two"]);
  assert.match(writes[1], /three$/);
  log.flush();
  assert.equal(writes.length, 2, "nothing left");
});
