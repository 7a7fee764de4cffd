/**
 * Event-loop delay, sampled for the bench (`DBPORT_LOOP_DELAY_FILE`): a timer
 * due every {@linkcode TICK_MS} fires late by however long the loop was busy
 * with something else - a large `JSON.stringify`, a synchronous state.db
 * write. Each lateness goes into 0.1 ms buckets, written cumulatively to the
 * file once a second, so a reader takes two snapshots and subtracts them to
 * get one phase's percentiles (`node:perf_hooks`' monitorEventLoopDelay
 * reports nothing under Deno 2.9).
 *
 * @module
 */

/** How often the sampling timer is due. */
export const TICK_MS = 5;
/** Bucket width, and the last bucket (everything from 100 ms up). */
const BUCKET_MS = 0.1;
const BUCKETS = 1_000;

/** Cumulative lateness counts: `counts[i]` is [i × 0.1 ms, (i + 1) × 0.1 ms). */
export interface LoopDelaySnapshot {
  bucketMs: number;
  counts: number[];
  max: number;
}

/** Sample into `file` until the returned stop function is called. */
export function sampleLoopDelay(file: string): () => void {
  const counts: number[] = new Array(BUCKETS).fill(0);
  let max = 0;
  let due = performance.now() + TICK_MS;
  const tick = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - due);
    max = Math.max(max, late);
    counts[Math.min(BUCKETS - 1, Math.floor(late / BUCKET_MS))]!++;
    due = now + TICK_MS;
  }, TICK_MS);
  const write = setInterval(() => {
    const snapshot: LoopDelaySnapshot = { bucketMs: BUCKET_MS, counts, max };
    Deno.writeTextFile(file, JSON.stringify(snapshot)).catch(() => {});
  }, 1_000);
  return () => {
    clearInterval(tick);
    clearInterval(write);
  };
}

/** The `p`-th percentile (0-100) of the samples taken between two snapshots, in ms. */
export function delayPercentile(
  before: LoopDelaySnapshot,
  after: LoopDelaySnapshot,
  p: number,
): number {
  const counts = after.counts.map((n, i) => n - (before.counts[i] ?? 0));
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return 0;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= (p / 100) * total) return (i + 1) * after.bucketMs;
  }
  return counts.length * after.bucketMs;
}
