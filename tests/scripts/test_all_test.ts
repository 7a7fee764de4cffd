/**
 * The suite runner's shards (scripts/test_all.ts): every end-to-end file in
 * exactly one shard, the shards about equally heavy, the minute-long load
 * tests apart.
 */
import { assert, assertEquals } from "@std/assert";
import { FileClock, shard } from "../../scripts/test_all.ts";

const tests = (n: number) => "Deno.test(".repeat(n);

Deno.test("shard() puts every file in one shard, the heaviest first into the lightest", () => {
  const sources: Record<string, string> = {
    "tests/e2e/a_test.ts": tests(9),
    "tests/e2e/b_test.ts": tests(5),
    "tests/e2e/c_test.ts": tests(4),
    "tests/e2e/d_test.ts": tests(1),
    "tests/e2e/e_test.ts": "// Deno.test is named, never called",
  };
  const shards = shard(Object.keys(sources), 2, (path) => sources[path]!);
  assertEquals(shards, [
    ["tests/e2e/a_test.ts", "tests/e2e/d_test.ts"],
    ["tests/e2e/b_test.ts", "tests/e2e/c_test.ts", "tests/e2e/e_test.ts"],
  ]);
});

Deno.test("shard() keeps the load tests apart and each shard within a test file of the other", () => {
  const sources: Record<string, string> = {
    "tests/load/load_test.ts": tests(1),
    "tests/load/soak_test.ts": tests(1),
  };
  for (let i = 0; i < 30; i++) {
    sources[`tests/e2e/f${i}_test.ts`] = tests(1 + (i * 7) % 11);
  }
  const files = Object.keys(sources);
  const shards = shard(files, 2, (path) => sources[path]!);
  assertEquals(shards.flat().sort(), [...files].sort());
  for (const load of ["tests/load/load_test.ts", "tests/load/soak_test.ts"]) {
    assertEquals(shards.filter((s) => s.includes(load)).length, 1);
  }
  assert(
    !shards.some((s) =>
      s.includes("tests/load/load_test.ts") &&
      s.includes("tests/load/soak_test.ts")
    ),
    "the two load tests share a shard",
  );
  const weight = (s: string[]) =>
    s.reduce(
      (total, path) =>
        total + (path.startsWith("tests/load/")
          ? 40
          : 1 + sources[path]!.split("Deno.test(").length - 1),
      0,
    );
  const [a, b] = shards.map(weight);
  assert(Math.abs(a! - b!) <= 12, `${a} against ${b}`);
});

Deno.test("shard() weighs a file by its recorded seconds, and one never recorded by its tests times the recorded seconds per test", () => {
  const sources: Record<string, string> = {
    "tests/e2e/slow_test.ts": tests(1),
    "tests/e2e/a_test.ts": tests(5),
    "tests/e2e/b_test.ts": tests(5),
    "tests/e2e/new_test.ts": tests(9),
  };
  // 60 s for one test, 10 s for each file of five: 80 s in 14 counted
  // (a file counts its tests and one), about 5.7 s a test; the new file's
  // ten weigh 57 s, so it goes apart from the slow one.
  const recorded = {
    "tests/e2e/slow_test.ts": 60,
    "tests/e2e/a_test.ts": 10,
    "tests/e2e/b_test.ts": 10,
  };
  const shards = shard(
    Object.keys(sources),
    2,
    (path) => sources[path]!,
    recorded,
  );
  assertEquals(shards, [
    ["tests/e2e/b_test.ts", "tests/e2e/slow_test.ts"],
    ["tests/e2e/a_test.ts", "tests/e2e/new_test.ts"],
  ]);
  // Counted by tests alone, the minute-long file and the new one shared a
  // shard.
  assertEquals(shard(Object.keys(sources), 2, (path) => sources[path]!), [
    ["tests/e2e/new_test.ts", "tests/e2e/slow_test.ts"],
    ["tests/e2e/a_test.ts", "tests/e2e/b_test.ts"],
  ]);
});

Deno.test("FileClock: a file runs from its `running … from` line to the next one's, the last to the process's end", () => {
  const clock = new FileClock();
  clock.line("some line before any file", 0);
  clock.line("running 3 tests from ./tests/e2e/a_test.ts", 1_000);
  clock.line("a test ... ok (2s)", 2_000);
  clock.line("running 1 test from ./tests/db/b_test.ts", 13_340);
  clock.end(15_000);
  clock.end(99_000);
  assertEquals(clock.seconds, {
    "tests/e2e/a_test.ts": 12.3,
    "tests/db/b_test.ts": 1.7,
  });
});
