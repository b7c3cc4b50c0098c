import assert from "node:assert/strict";
import { isLauncher, launchersOf, type ListProcesses, parsePs, watchLaunchers } from "./launcher_exit.ts";
/** The watch's timers do not hold the process open; this one does, while a test waits for them. */
function holdOpen(): () => void {
  const timer = setTimeout(() => {}, 60_000);
  return () => clearTimeout(timer);
}

const PS = `
    1     0 Ss   Wed Nov 25 09:20:44 2026 /sbin/init
  100     1 Ss   Wed Nov 25 09:21:00 2026 bash
  200   100 Sl   Wed Nov 25 10:00:00 2026 npm exec deno@2.9.6 task start
  300   200 S    Wed Nov 25 10:00:01 2026 sh -c 'deno' task start
  400   300 Sl   Wed Nov 25 10:00:01 2026 deno task start
  500   400 Sl   Wed Nov 25 10:00:02 2026 /root/.npm/_npx/x/node_modules/deno/deno run --allow-net main.ts
`;

Deno.test("launchers: npm exec, its shell and deno task are launchers; the shell above them is not", () => {
  const table = parsePs(PS);
  assert.equal(table.get(200)?.args, "npm exec deno@2.9.6 task start");
  assert.equal(table.get(200)?.started, "Wed Nov 25 10:00:00 2026");
  assert.deepEqual(launchersOf(500, table).map((p) => p.pid), [400, 300, 200]);
  assert.equal(isLauncher("bash"), false);
  assert.equal(isLauncher("deno test -A"), false);
  assert.equal(
    isLauncher("/usr/bin/node /usr/lib/node_modules/npm/bin/npx-cli.js deno@2.9.6 task start"),
    true,
  );
  assert.equal(isLauncher("systemd --user"), false);
});

Deno.test("launchers: the watch stops once when a launcher ends or its PID is reused, not while all live", async () => {
  const table = parsePs(PS);
  let now = new Map(table);
  const checked = Promise.withResolvers<void>();
  let checks = 0;
  const list: ListProcesses = (pids) => {
    if (pids && ++checks === 3) checked.resolve();
    return Promise.resolve(pids ? new Map(pids.flatMap((p) => now.has(p) ? [[p, now.get(p)!]] : [])) : table);
  };
  const release = holdOpen();
  const gone: string[] = [];
  const { promise: stopped, resolve } = Promise.withResolvers<void>();
  const watch = await watchLaunchers((what) => {
    gone.push(what);
    resolve();
  }, { list, pid: 500, ppid: () => 400, intervalMs: 5 });
  try {
    // The parent is watched through its PID; the others through ps.
    assert.deepEqual(watch.launchers.map((p) => p.pid), [300, 200]);
    await checked.promise;
    assert.deepEqual(gone, [], "three checks while every launcher lives");
    // A PID taken by another process does not pass for the launcher.
    now = new Map(now).set(200, { ...table.get(200)!, started: "Wed Nov 25 11:00:00 2026" });
    await stopped;
    assert.equal(gone.length, 1);
    assert.match(gone[0], /launching process 200 \(npm exec\) ended/);
  } finally {
    watch.stop();
    release();
  }
});

Deno.test("launchers: a parent that is no launcher (a shell, nohup) is not watched", async () => {
  const table = parsePs(PS);
  const watch = await watchLaunchers(() => {}, {
    list: () => Promise.resolve(table),
    pid: 200,
    ppid: () => 100,
  });
  watch.stop();
  assert.equal(watch.parent, false);
  assert.deepEqual(watch.launchers, []);
  const untold = await watchLaunchers(() => {}, {
    list: () => Promise.resolve(undefined),
    ppid: () => 100,
    ranByTask: false,
  });
  untold.stop();
  assert.equal(untold.parent, false);
});

/**
 * A watch on parent 400, run by a task, with `list` as its `ps`: `ended(pid)` makes the parent look gone (its
 * process re-parented to `pid`); `check` runs against the watch and its report, then the watch is stopped.
 */
async function parentWatch(
  list: (ended: () => void) => ReturnType<ListProcesses>,
  check: (watch: Awaited<ReturnType<typeof watchLaunchers>>, said: Promise<string>) => Promise<void>,
  pid?: number,
) {
  const release = holdOpen();
  let parent = 400;
  const gone = () => parent = 1;
  const { promise, resolve } = Promise.withResolvers<string>();
  const watch = await watchLaunchers(resolve, {
    list: () => list(gone),
    pid,
    ppid: () => parent,
    ranByTask: true,
    intervalMs: 5,
  });
  try {
    await check(watch, promise);
  } finally {
    watch.stop();
    release();
  }
}

Deno.test("launchers: the parent ending is noticed without ps", async () => {
  let end = () => {};
  await parentWatch((gone) => {
    end = gone;
    return Promise.resolve(undefined);
  }, async (watch, said) => {
    assert.deepEqual(watch.launchers, []);
    assert.equal(watch.parent, true);
    end();
    assert.equal(await said, "the parent process 400 ended");
  });
});

Deno.test("launchers: a parent that ends while ps lists is still noticed", async () => {
  // The listing is taken once the parent is gone: this process shows under init, its parent nowhere.
  await parentWatch((gone) => {
    gone();
    const table = parsePs(PS);
    table.delete(400);
    table.set(500, { ...table.get(500)!, ppid: 1 });
    return Promise.resolve(table);
  }, async (watch, said) => {
    assert.deepEqual(watch.launchers, []);
    assert.equal(watch.parent, true);
    assert.equal(await said, "the parent process 400 ended");
  }, 500);
});
