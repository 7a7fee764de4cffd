/**
 * Editing connections.json under its lock file, as separate processes do:
 * concurrent `connections add` lose nothing, a live lock is waited for, a
 * stale one (dead owner, kill -9, garbage) is taken over, a lock that stays
 * is refused by name.
 */

import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { loadConnections } from "../../lib/app/connections.ts";
import {
  editFile,
  FileLockBusy,
  lockPathOf,
  processStart,
  withFileLock,
} from "../../lib/app/file_lock.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { addConnection } from "../_connection_add.ts";

const LOCK_MODULE = new URL("../../lib/app/file_lock.ts", import.meta.url)
  .href;

async function tempHome(): Promise<string & AsyncDisposable> {
  const home = await Deno.makeTempDir({ prefix: "dbport-lock-" });
  return Object.assign(home, {
    [Symbol.asyncDispose]: () => Deno.remove(home, { recursive: true }),
  }) as string & AsyncDisposable;
}

async function names(home: string): Promise<string[]> {
  const loaded = await loadConnections(`${home}/${CONNECTIONS_FILE}`);
  assert(loaded.ok);
  return loaded.connections.map((c) => c.name).sort();
}

function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** A deno process that takes the lock on `path` and holds it until killed. */
async function holder(path: string): Promise<Deno.ChildProcess> {
  const script = `import { withFileLock } from ${JSON.stringify(LOCK_MODULE)};
await withFileLock(${
    JSON.stringify(path)
  }, () => new Promise(() => { setInterval(() => {}, 1000); console.log("held"); }));`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  assertStringIncludes(text(value!), "held");
  reader.releaseLock();
  await child.stdout.cancel();
  return child;
}

Deno.test("ten concurrent `connections add` lose no connection", async () => {
  await using home = await tempHome();
  const runs = await Promise.all(
    Array.from({ length: 10 }, (_, i) => addConnection(home, `db${i}`)),
  );
  for (const run of runs) assertEquals(run.code, 0, text(run.stderr));
  assertEquals(
    await names(home),
    Array.from({ length: 10 }, (_, i) => `db${i}`).sort(),
  );
  const left = [...Deno.readDirSync(home)].map((e) => e.name);
  assert(!left.some((name) => name.includes(".lock")), left.join(", "));
});

Deno.test("a writer waits for a live lock, then applies its change to what the holder saved", async () => {
  await using home = await tempHome();
  const path = `${home}/${CONNECTIONS_FILE}`;
  let adding: Promise<Deno.CommandOutput> | undefined;
  await withFileLock(path, async () => {
    adding = addConnection(home, "waiting");
    // Long enough for the CLI to start and find the lock held: it waits
    // silently, so its wait shows nowhere to look at.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const { writeFileAtomic } = await import("../../lib/app/atomic_file.ts");
    await writeFileAtomic(
      path,
      JSON.stringify({
        connections: [{
          id: crypto.randomUUID(),
          name: "holder",
          engine: "sqlite",
          url: `${home}/holder.db`,
        }],
      }),
    );
  });
  const run = await adding!;
  assertEquals(run.code, 0, text(run.stderr));
  assertEquals(await names(home), ["holder", "waiting"]);
});

Deno.test("a stale lock of a dead process is taken over", async () => {
  await using home = await tempHome();
  const path = `${home}/${CONNECTIONS_FILE}`;
  const dead = new Deno.Command("true").spawn();
  await dead.status;
  await Deno.writeTextFile(
    lockPathOf(path),
    JSON.stringify({
      pid: dead.pid,
      started: "linux:1",
      at: Date.now(),
      nonce: "x",
    }),
  );
  const run = await addConnection(home, "after");
  assertEquals(run.code, 0, text(run.stderr));
  assertEquals(await names(home), ["after"]);
  await assertRejects(() => Deno.stat(lockPathOf(path)), Deno.errors.NotFound);
});

Deno.test("a lock whose PID now names another process (PID reuse) is stale", async () => {
  await using home = await tempHome();
  const path = `${home}/${CONNECTIONS_FILE}`;
  const started = await processStart(Deno.pid);
  if (started === null) {
    // deno-lint-ignore no-console
    console.log("SKIPPED: this platform cannot tell when a process started");
    return;
  }
  // This very process, but "started" at another time: the PID was reused.
  await Deno.writeTextFile(
    lockPathOf(path),
    JSON.stringify({
      pid: Deno.pid,
      started: `${started}0`,
      at: Date.now(),
      nonce: "x",
    }),
  );
  await editFile(path, () => "reused\n", { waitMs: 1_000 });
  assertEquals(await Deno.readTextFile(path), "reused\n");
});

Deno.test("the lock of a writer killed with -9 is taken over", async () => {
  await using home = await tempHome();
  const path = `${home}/${CONNECTIONS_FILE}`;
  const child = await holder(path);
  const owner = JSON.parse(await Deno.readTextFile(lockPathOf(path)));
  assertEquals(owner.pid, child.pid);
  child.kill("SIGKILL");
  await child.status;
  const run = await addConnection(home, "survivor");
  assertEquals(run.code, 0, text(run.stderr));
  assertEquals(await names(home), ["survivor"]);
});

Deno.test("a lock held past the wait is refused, naming the lock file and the PID", async () => {
  await using home = await tempHome();
  const path = `${home}/${CONNECTIONS_FILE}`;
  const child = await holder(path);
  try {
    const error = await assertRejects(
      () => editFile(path, () => "never\n", { waitMs: 300 }),
      FileLockBusy,
    );
    assertStringIncludes(error.message, lockPathOf(path));
    assertStringIncludes(error.message, `PID ${child.pid}`);
    await assertRejects(() => Deno.stat(path), Deno.errors.NotFound);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
});

Deno.test("a lock file of garbage is waited for briefly, then taken over", async () => {
  await using home = await tempHome();
  const path = `${home}/${CONNECTIONS_FILE}`;
  await Deno.writeTextFile(lockPathOf(path), "\u0000garbage{");
  const started = Date.now();
  await editFile(path, () => "fresh\n");
  // Not at once: a lock being written by its owner reads as garbage too.
  assert(Date.now() - started >= 1_500, `${Date.now() - started} ms`);
  assertEquals(await Deno.readTextFile(path), "fresh\n");
  // An old garbage lock (a writer that died before it filled it) at once.
  await Deno.writeTextFile(lockPathOf(path), "");
  await Deno.utime(lockPathOf(path), 0, 0);
  await editFile(path, () => "again\n", { waitMs: 200 });
  assertEquals(await Deno.readTextFile(path), "again\n");
});

Deno.test("a lock that cannot be created is an error naming the lock file; the file is untouched", async () => {
  await using home = await tempHome();
  // A file where the app directory should be: nothing can be created in it
  // (a read-only directory gives the same error to a user who is not root).
  const blocked = `${home}/not-a-dir`;
  await Deno.writeTextFile(blocked, "");
  const error = await assertRejects(() =>
    withFileLock(`${blocked}/connections.json`, () => Promise.resolve())
  );
  assertStringIncludes(
    (error as Error).message,
    `${blocked}/connections.json.lock`,
  );
});

Deno.test("a change that throws writes nothing and releases the lock", async () => {
  await using home = await tempHome();
  const path = `${home}/settings.json`;
  await Deno.writeTextFile(path, "{}\n");
  await assertRejects(
    () =>
      editFile(path, () => {
        throw new Error("refused");
      }),
    Error,
    "refused",
  );
  assertEquals(await Deno.readTextFile(path), "{}\n");
  await assertRejects(() => Deno.stat(lockPathOf(path)), Deno.errors.NotFound);
});

Deno.test("a malformed connections.json is never overwritten by an add", async () => {
  await using home = await tempHome();
  const path = `${home}/${CONNECTIONS_FILE}`;
  await Deno.writeTextFile(path, '{"connections": [');
  const run = await addConnection(home, "x");
  assert(run.code !== 0);
  assertStringIncludes(text(run.stderr), "Cannot parse");
  assertEquals(await Deno.readTextFile(path), '{"connections": [');
});
