/**
 * The activity log summed up for the console's Overview: calls, calls per
 * minute, p50/p95 latency, denials and errors over a window, in time
 * buckets, and by client and by connection. A pure function over the log's
 * rows, so the page and its test count the same way.
 *
 * @module
 */

import { BRIDGE_ITSELF } from "../base/identity.ts";
import type { Outcome } from "./outcome.ts";

/** What a summary needs of one logged request. */
export interface StatRow {
  time: number;
  durationMs: number;
  outcome: Outcome;
  clientName: string | null;
  connectionId: string | null;
  /** The stdio bridge's own check, not a client's request (identity.ts). */
  bridgeItself?: boolean;
}

/** One set of numbers. */
export interface Figures {
  calls: number;
  /** Calls per minute over the whole window. */
  perMinute: number;
  /** Latency percentiles in ms (nearest rank); null without calls. */
  p50: number | null;
  p95: number | null;
  denied: number;
  /** Ended with an error (rate limits included). */
  errors: number;
}

/** One bucket of the window. */
export interface Bucket extends Figures {
  start: number;
}

/** A window's summary. */
export interface WindowStats {
  from: number;
  to: number;
  bucketMs: number;
  total: Figures;
  buckets: Bucket[];
  /** Busiest first. */
  byClient: { name: string; figures: Figures }[];
  byConnection: { id: string | null; figures: Figures }[];
}

/** The nearest-rank percentile of sorted values. */
export function percentile(
  sorted: readonly number[],
  p: number,
): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1]!;
}

/** The figures of some rows over `minutes`. */
export function figuresOf(rows: readonly StatRow[], minutes: number): Figures {
  const durations = rows.map((row) => row.durationMs).sort((a, b) => a - b);
  return {
    calls: rows.length,
    perMinute: Math.round((rows.length / minutes) * 1000) / 1000,
    p50: percentile(durations, 0.5),
    p95: percentile(durations, 0.95),
    denied: rows.filter((row) => row.outcome === "denied").length,
    errors:
      rows.filter((row) =>
        row.outcome === "error" || row.outcome === "rateLimited"
      ).length,
  };
}

/** The summary of the rows within [from, to), in `buckets` buckets. */
export function windowStats(
  rows: readonly StatRow[],
  from: number,
  to: number,
  buckets: number,
): WindowStats {
  const inside = rows.filter((row) => row.time >= from && row.time < to);
  const minutes = (to - from) / 60_000;
  const bucketMs = (to - from) / buckets;
  const split: StatRow[][] = Array.from({ length: buckets }, () => []);
  for (const row of inside) {
    const i = Math.min(buckets - 1, Math.floor((row.time - from) / bucketMs));
    split[i]!.push(row);
  }
  const group = <K>(key: (row: StatRow) => K) => {
    const groups = new Map<K, StatRow[]>();
    for (const row of inside) {
      const k = key(row);
      const list = groups.get(k);
      if (list === undefined) groups.set(k, [row]);
      else list.push(row);
    }
    return [...groups].map(([k, list]) => ({
      key: k,
      figures: figuresOf(list, minutes),
    })).sort((a, b) => b.figures.calls - a.figures.calls);
  };
  return {
    from,
    to,
    bucketMs,
    total: figuresOf(inside, minutes),
    buckets: split.map((list, i) => ({
      start: from + i * bucketMs,
      ...figuresOf(list, bucketMs / 60_000),
    })),
    byClient: group((row) =>
      row.bridgeItself ? BRIDGE_ITSELF : row.clientName ?? "(no client name)"
    ).map((
      g,
    ) => ({ name: g.key, figures: g.figures })),
    byConnection: group((row) => row.connectionId).map((g) => ({
      id: g.key,
      figures: g.figures,
    })),
  };
}
