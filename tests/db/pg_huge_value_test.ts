/**
 * A PostgreSQL value larger than any answer (issue 38): `repeat('x',
 * 400000000)` through execute_query is read as it streams — its head kept,
 * the rest counted and never held — so the server process's peak resident
 * memory (VmHWM) grows by less than 64 MiB, where holding the value would
 * cost 400 MB at least. The process is warmed first with answers of the same
 * shape (five 3 MB cells read eight at a time): V8 sizes its heap (40-80 MiB)
 * on the first large answers whatever their size. This is the wired reader's
 * (pg_wired.ts), on by default (`DBPORT_PG_WIRE=0` turns it off). Eight
 * reads at once around a value stopped mid-stream are
 * tests/db/pg_read_edges_test.ts's (they once left two requests unanswered).
 */

import { assert, assertEquals } from "@std/assert";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { WIRE_ENV } from "../../lib/db/postgres/postgres.ts";
import { saveSettings } from "../../lib/serve.ts";
import { savedConnection } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { spawnServe } from "../_main.ts";
import { modernHeaders, modernRequest } from "../_server.ts";

/** The process's peak resident memory so far (VmHWM), in MiB. */
function peakMib(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

Deno.test({
  name:
    "PostgreSQL (the wired reader): repeat('x', 400000000) grows peak RSS < 64 MiB after warming with 3 MB cells at C=8",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const home = await Deno.makeTempDir({ prefix: "dbport-pg-huge-" });
    const saved = savedConnection(fixture, "Huge");
    await saveConnections(inAppDir(home, CONNECTIONS_FILE), [saved]);
    await saveSettings(home, { requireAuth: false });
    const serve = await spawnServe(home, { env: { [WIRE_ENV]: "1" } });
    try {
      const call = async (query: string, timeout = 60) => {
        const body = modernRequest("tools/call", {
          name: "execute_query",
          arguments: {
            connection_id: saved.id,
            query,
            timeout_seconds: timeout,
          },
        }, crypto.randomUUID());
        const response = await fetch(serve.url!, {
          method: "POST",
          headers: modernHeaders(body),
          body: JSON.stringify(body),
        });
        return JSON.parse(await response.text());
      };
      const fiveCells =
        "select g, repeat(chr(97 + g), 3000000) as big from generate_series(1, 5) g";
      const eight = () =>
        Promise.all(Array.from({ length: 8 }, () => call(fiveCells)));
      // Warm: the first large answers size V8's heap.
      for (let i = 0; i < 3; i++) {
        await call("select repeat('w', 20000000) as warm");
        await eight();
      }
      const before = peakMib(serve.child.pid);
      const started = Date.now();
      const answer = await call(
        "select repeat('x', 400000000) as huge, 1 as one",
      );
      const took = Date.now() - started;
      const afterHuge = peakMib(serve.child.pid);
      const text = JSON.stringify(answer);
      // deno-lint-ignore no-console
      console.log(
        `repeat 400 MB: ${took} ms, peak RSS ${Math.round(before)} -> ${
          Math.round(afterHuge)
        } MiB; ${text.slice(0, 200)}`,
      );
      const row = answer.result?.structuredContent?.rows?.[0];
      assert(Array.isArray(row), text.slice(0, 500));
      // Its head and its size; the statement stopped there, so the value
      // after it in the row was not read.
      const cell = String(row[0]);
      assert(cell.startsWith("xxxx"), cell.slice(0, 100));
      assert(
        cell.endsWith(
          "…[cut: a value of 400,000,000 bytes, larger than what was left of the answer; the statement was stopped]",
        ),
        cell.slice(-200),
      );
      assert(cell.length < 100_000, `${cell.length} characters`);
      assertEquals(row[1], "…[not read: the statement was stopped]");
      assertEquals(answer.result?.structuredContent?.is_truncated, true);
      assert(
        afterHuge - before < 64,
        `peak RSS grew ${
          Math.round(afterHuge - before)
        } MiB (holding the value: 400+)`,
      );
      // The session it ran on still serves reads.
      const next = await call("select 2 as two");
      assertEquals(next.result?.structuredContent?.rows, [[2]]);
    } finally {
      serve.child.kill("SIGTERM");
      await serve.readRest();
      await serve.child.status;
      await serve.child.stderr.cancel().catch(() => {});
      await Deno.remove(home, { recursive: true });
    }
  },
});
