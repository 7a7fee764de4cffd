/**
 * A closed-loop load generator: `concurrency` workers each send a request,
 * wait for its answer and send the next, for `seconds` after a warm-up.
 * Latencies are kept whole to report exact percentiles.
 *
 * @module
 */

/** What one run measured. */
export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  /** Microseconds of the measured process's CPU per request (null: not measured). */
  cpuPerRequest: number | null;
  /** Microseconds of the database server's CPU per request, when measured. */
  dbCpuPerRequest?: number | null;
}

/** Options of {@linkcode runLoad}. */
export interface LoadOptions {
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  /** One request; resolves true when the answer was right. */
  request: () => Promise<boolean>;
  /** The CPU clock of the process under test, in microseconds. */
  cpu?: () => number;
  /**
   * The database server's work for the process under test: a snapshot
   * function and the difference of two (bench/db_cpu.ts).
   */
  db?: {
    snapshot: () => Promise<unknown>;
    spent: (before: unknown, after: unknown) => number;
  };
}

/** The p-th percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(
    sorted.length - 1,
    Math.max(0, Math.ceil((p / 100) * sorted.length) - 1),
  );
  return sorted[index]!;
}

async function phase(
  concurrency: number,
  seconds: number,
  request: () => Promise<boolean>,
  latencies: number[] | null,
): Promise<{ count: number; errors: number }> {
  const end = performance.now() + seconds * 1000;
  let count = 0;
  let errors = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      let ok = false;
      try {
        ok = await request();
      } catch {
        ok = false;
      }
      latencies?.push(performance.now() - started);
      count++;
      if (!ok) errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { count, errors };
}

/** Warm up, then measure. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  await phase(
    options.concurrency,
    options.warmupSeconds,
    options.request,
    null,
  );
  const latencies: number[] = [];
  const dbBefore = await options.db?.snapshot();
  const cpuBefore = options.cpu?.();
  const started = performance.now();
  const { count, errors } = await phase(
    options.concurrency,
    options.seconds,
    options.request,
    latencies,
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = options.cpu?.();
  const dbAfter = await options.db?.snapshot();
  const db = options.db === undefined
    ? null
    : options.db.spent(dbBefore, dbAfter);
  latencies.sort((a, b) => a - b);
  return {
    requests: count,
    errors,
    rps: count / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuPerRequest: cpuBefore === undefined || cpuAfter === undefined
      ? null
      : (cpuAfter - cpuBefore) / count,
    dbCpuPerRequest: db === null ? null : db / count,
  };
}
