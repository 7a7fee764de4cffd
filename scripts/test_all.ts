/**
 * `deno task test`: the whole suite, in three `deno test` processes. The
 * unit tier first (in parallel, the databases' ports denied: see
 * scripts/test_tier.ts), then the end-to-end tier in two shards at once,
 * each file serial within its shard. Two processes rather than `deno test
 * --parallel`: a test of one shard sees its own process alone — its RSS,
 * its file descriptors, its listening sockets, its environment — while the
 * databases are shared as they are with any other dbport process (every
 * test counts only its own sessions). The serial suite took 17–19 minutes
 * on the 2-core CI machine; sharded, about 11.
 *
 * Each process's lines are printed as they come, prefixed with its name;
 * the last line is deno's summary summed over the three (`ok | N passed
 * (S steps) | M failed (time)`), which `.ci/run` reads. Further arguments
 * (`--filter`, say) go to every process.
 *
 * The shards are balanced by each file's seconds in the last recorded run
 * (tests/durations.json); `deno task test:durations` runs the suite and
 * writes them anew (`--write-durations`).
 *
 * @module
 */

import { testFiles, tierOf, tierRun } from "../tests/tiers.ts";

/** deno's summary line: `ok | 3 passed (1 step) | 0 failed | 1 ignored (23ms)`. */
const SUMMARY =
  /^(ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed(?: \((\d+) steps?\))?(?: \| (\d+) ignored)?/;

/** What one process ended with. */
interface Outcome {
  name: string;
  code: number;
  passed: number;
  steps: number;
  failed: number;
  ignored: number;
  summarised: boolean;
  /** Each file's seconds. */
  clock: FileClock;
}

/**
 * Split `files` into `n` shards of about equal running time: the longest
 * first into the lightest shard. A file weighs the seconds it took in the
 * last recorded run (`recorded`, tests/durations.json) when there is one;
 * otherwise its number of tests times the recorded seconds per test (a
 * load test, which runs for a minute, many). Counting tests alone left one
 * shard four minutes behind the other (CI: 15 m 27 s against 19 m 43 s).
 */
export function shard(
  files: readonly string[],
  n: number,
  read: (path: string) => string,
  recorded: Readonly<Record<string, number>> = {},
): string[][] {
  const count = (path: string) =>
    1 + (read(path).match(/\bDeno\.test\(/g)?.length ?? 0);
  const known = files.filter((path) => recorded[path] !== undefined);
  const perTest = known.length === 0 ? 1 : known.reduce(
    (total, path) => total + recorded[path]!,
    0,
  ) / known.reduce((total, path) => total + count(path), 0);
  const weigh = (path: string) =>
    recorded[path] ??
      (path.startsWith("tests/load/") ? 40 : count(path)) * perTest;
  const weighed = files.map((path) => ({ path, weight: weigh(path) }))
    .sort((a, b) => b.weight - a.weight || a.path.localeCompare(b.path));
  const shards = Array.from({ length: n }, () => ({
    files: [] as string[],
    weight: 0,
  }));
  for (const { path, weight } of weighed) {
    const lightest = shards.reduce((a, b) => b.weight < a.weight ? b : a);
    lightest.files.push(path);
    lightest.weight += weight;
  }
  return shards.map((s) => s.files.sort());
}

/** deno's line as it starts a file: `running 3 tests from ./tests/x_test.ts`. */
const RUNNING = /^running \d+ tests? from \.\/(\S+)/;

/**
 * Each file's seconds in one `deno test` process, from the lines it prints:
 * a file runs from its `running … from` line to the next one's (or the
 * process's end).
 */
export class FileClock {
  readonly seconds: Record<string, number> = {};
  #file: string | null = null;
  #since = 0;

  /** Read one line the process printed, at `now` (performance.now()). */
  line(line: string, now: number): void {
    const match = RUNNING.exec(line);
    if (match === null) return;
    this.end(now);
    this.#file = match[1]!;
    this.#since = now;
  }

  /** The process ended (or another file began) at `now`. */
  end(now: number): void {
    if (this.#file === null) return;
    this.seconds[this.#file] = Math.round((now - this.#since) / 100) / 10;
    this.#file = null;
  }
}

/** Where each end-to-end file's seconds of the last recorded run are kept. */
const DURATIONS = "tests/durations.json";

const root = new URL("../", import.meta.url);
const encoder = new TextEncoder();

/** One line on stdout. */
function say(line: string): void {
  const bytes = encoder.encode(`${line}\n`);
  for (let written = 0; written < bytes.length;) {
    written += Deno.stdout.writeSync(bytes.subarray(written));
  }
}

/** Run `deno test` on `files`, its lines prefixed with `[name]`. */
async function run(
  name: string,
  files: readonly string[],
  flags: readonly string[],
  env: Record<string, string>,
  rest: readonly string[],
): Promise<Outcome> {
  const outcome: Outcome = {
    name,
    code: 1,
    passed: 0,
    steps: 0,
    failed: 0,
    ignored: 0,
    summarised: false,
    clock: new FileClock(),
  };
  if (files.length === 0) return { ...outcome, code: 0, summarised: true };
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "--config",
      "deno.dev.json",
      "--no-prompt",
      ...flags,
      ...rest,
      ...files,
    ],
    cwd: root,
    // deno colours its lines even into a pipe: plain, they are read here.
    env: { ...env, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const relay = async (stream: ReadableStream<Uint8Array>) => {
    let partial = "";
    const write = (line: string) => {
      const match = SUMMARY.exec(line);
      if (match !== null) {
        outcome.summarised = true;
        outcome.passed = Number(match[2]);
        outcome.steps = Number(match[3] ?? 0);
        outcome.failed = Number(match[4]);
        outcome.ignored = Number(match[6] ?? 0);
      }
      outcome.clock.line(line, performance.now());
      say(`[${name}] ${line}`);
    };
    for await (
      const chunk of stream.pipeThrough(new TextDecoderStream())
    ) {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      for (const line of lines) write(line);
    }
    if (partial !== "") write(partial);
  };
  await Promise.all([relay(child.stdout), relay(child.stderr)]);
  outcome.code = (await child.status).code;
  outcome.clock.end(performance.now());
  return outcome;
}

/** Run the suite; see the module's comment. */
/** The seconds of the last recorded run, by file; none when unreadable. */
function recordedDurations(): Record<string, number> {
  try {
    return JSON.parse(Deno.readTextFileSync(new URL(DURATIONS, root)));
  } catch {
    return {};
  }
}

/** Keep this run's seconds of the end-to-end files for the next runs' shards. */
function writeDurations(
  recorded: Record<string, number>,
  outcomes: readonly Outcome[],
  e2e: readonly string[],
): void {
  const seconds: Record<string, number> = {};
  for (const path of e2e) {
    const now = outcomes.find((o) => o.clock.seconds[path] !== undefined)
      ?.clock.seconds[path];
    const kept = now ?? recorded[path];
    if (kept !== undefined) seconds[path] = kept;
  }
  Deno.writeTextFileSync(
    new URL(DURATIONS, root),
    JSON.stringify(seconds, Object.keys(seconds).sort(), 2) + "\n",
  );
  say(`wrote ${DURATIONS}: ${Object.keys(seconds).length} files`);
}

/**
 * Make sure of what the PostgreSQL fixtures take for granted
 * (tests/_prepare_databases.ts); what it cannot do it says, and the tests
 * that need it fail saying why.
 */
async function prepareDatabases(): Promise<void> {
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--config",
      "deno.dev.json",
      "--no-prompt",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "tests/_prepare_databases.ts",
    ],
    cwd: root,
    stdin: "null",
  }).output();
  if (code !== 0) say("tests/_prepare_databases.ts: exit code " + code);
}

async function main(args: readonly string[]): Promise<number> {
  const record = args.includes("--write-durations");
  const rest = args.filter((arg) => arg !== "--write-durations");
  const recorded = recordedDurations();
  const all = await testFiles(root);
  const unit = all.filter((path) => tierOf(path) === "unit");
  const e2e = all.filter((path) => tierOf(path) === "e2e");
  const started = performance.now();
  await prepareDatabases();
  const unitRun = tierRun("unit");
  const e2eRun = tierRun("e2e");
  const outcomes = [
    await run("unit", unit, unitRun.flags, unitRun.env, rest),
    ...await Promise.all(
      shard(
        e2e,
        2,
        (path) => Deno.readTextFileSync(new URL(path, root)),
        recorded,
      ).map(
        (files, i) =>
          run(`e2e-${i + 1}`, files, e2eRun.flags, e2eRun.env, rest),
      ),
    ),
  ];
  if (record) writeDurations(recorded, outcomes, e2e);
  const sum = (key: "passed" | "steps" | "failed" | "ignored") =>
    outcomes.reduce((total, outcome) => total + outcome[key], 0);
  const broken = outcomes.filter((o) => !o.summarised || o.code !== 0);
  for (const outcome of broken) {
    say(
      `${outcome.name}: ${
        outcome.summarised ? `exit code ${outcome.code}` : "no summary"
      }`,
    );
  }
  const failed = sum("failed") + outcomes.filter((o) => !o.summarised).length;
  const seconds = Math.round((performance.now() - started) / 1000);
  const time = `${Math.floor(seconds / 60)}m${seconds % 60}s`;
  const steps = sum("steps");
  const ignored = sum("ignored");
  say(
    `${broken.length === 0 ? "ok" : "FAILED"} | ${sum("passed")} passed${
      steps > 0 ? ` (${steps} steps)` : ""
    } | ${failed} failed${
      ignored > 0 ? ` | ${ignored} ignored` : ""
    } (${time})`,
  );
  return broken.length === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
