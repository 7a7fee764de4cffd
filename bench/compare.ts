/**
 * The load phases of a bench run: one contender at a time ({@linkcode
 * Runner.load}) or several side by side in interleaved rounds
 * ({@linkcode Runner.compare}), with the server CPU and, when asked, the
 * database CPU of each (`db_cpu.ts`).
 *
 * @module
 */

import type { Connection } from "mysql2/promise";
import type postgres from "postgres";
import {
  type DbSnapshot,
  dbSnapshot,
  dbSpent,
  mariaSnapshot,
} from "./db_cpu.ts";
import { type LoadResult, runLoad } from "./load.ts";
import { closeConnections } from "./mcp_request.ts";
import { cpuMicros, ownCpuMicros } from "./proc.ts";

/** Which database's CPU a load counts for its contenders (false: none). */
export type Db = false | "postgres" | "mysql";

/** One side of a comparison: a request and the process that serves it. */
export type Contender = [
  name: string,
  request: () => Promise<boolean>,
  pid: number | null,
];

/** How long each point runs, and the databases whose CPU is read. */
export interface RunnerSettings {
  /** Measured seconds per contender and point, split over `rounds`. */
  seconds: number;
  rounds: number;
  /** Warm-up seconds before a point's first round. */
  warmup: number;
  sql: ReturnType<typeof postgres>;
  maria: Connection;
}

/** The runner's two ways to load. */
export interface Runner {
  load(
    request: () => Promise<boolean>,
    concurrency: number,
    pid: number | null,
    seconds: number,
    warmupSeconds: number,
    withDb?: Db,
  ): Promise<LoadResult>;
  compare(
    contenders: Contender[],
    concurrency: number,
    withDb?: Db,
  ): Promise<Record<string, LoadResult>>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A runner over `settings`. */
export function createRunner(settings: RunnerSettings): Runner {
  const { sql, maria } = settings;
  const SECONDS = settings.seconds;
  const ROUNDS = settings.rounds;
  const WARMUP = settings.warmup;
  async function load(
    request: () => Promise<boolean>,
    concurrency: number,
    pid: number | null,
    seconds: number,
    warmupSeconds: number,
    withDb: Db = false,
  ): Promise<LoadResult> {
    try {
      return await runLoad({
        concurrency,
        seconds,
        warmupSeconds,
        request,
        cpu: pid === null ? ownCpuMicros : () => cpuMicros(pid),
        // The database's backends (PostgreSQL) or threads (MariaDB) serving
        // this contender (the harness's own for the raw driver).
        ...(withDb
          ? {
            db: {
              snapshot: () =>
                withDb === "mysql"
                  ? mariaSnapshot(maria, pid ?? Deno.pid)
                  : dbSnapshot(sql, pid ?? Deno.pid),
              spent: (a: unknown, b: unknown) =>
                dbSpent(a as DbSnapshot, b as DbSnapshot),
            },
          }
          : {}),
      });
    } finally {
      closeConnections();
      // Let the server see the closes: dbport refuses a 65th connection, and
      // the next phase's first connection must not race the last 64 closing.
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /**
   * Measure contenders side by side in ROUNDS interleaved rounds (the start
   * rotating each round), and keep each figure's median: a neighbour's burst on
   * a shared machine then hurts one round of everyone rather than one
   * contender's whole figure.
   */
  async function compare(
    contenders: Contender[],
    concurrency: number,
    withDb: Db = false,
  ): Promise<Record<string, LoadResult>> {
    const rounds: Record<string, LoadResult[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < contenders.length; i++) {
        const [name, request, pid] =
          contenders[(i + round) % contenders.length]!;
        const result = await load(
          request,
          concurrency,
          pid,
          SECONDS / ROUNDS,
          round === 0 ? WARMUP : 0.2,
          withDb,
        );
        (rounds[name] ??= []).push(result);
      }
    }
    const out: Record<string, LoadResult> = {};
    for (const [name] of contenders) {
      const results = rounds[name]!;
      const cpus = results.map((r) => r.cpuPerRequest).filter((c) =>
        c !== null
      );
      out[name] = {
        requests: results.reduce((sum, r) => sum + r.requests, 0),
        errors: results.reduce((sum, r) => sum + r.errors, 0),
        rps: median(results.map((r) => r.rps)),
        p50: median(results.map((r) => r.p50)),
        p99: median(results.map((r) => r.p99)),
        cpuPerRequest: cpus.length === 0 ? null : median(cpus),
        ...(withDb
          ? {
            dbCpuPerRequest: median(results.map((r) => r.dbCpuPerRequest ?? 0)),
          }
          : {}),
      };
    }
    return out;
  }
  return { load, compare };
}
