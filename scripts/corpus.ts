// deno-lint-ignore-file no-console
/**
 * `deno task corpus [DIR]`: feed the SELECTs of PostgreSQL's own regression
 * suite through dbport's read path and count the plain reads it refuses,
 * by reason. Not part of CI.
 *
 * DIR is `src/test/regress/sql` of a PostgreSQL source tree (for example
 * Debian's: `apt-get source postgresql-15`, with a `deb-src` line), or
 * DBPORT_CORPUS_DIR. For each file, in `parallel_schedule` order when the
 * schedule sits beside DIR: its setup statements (tables, data, types,
 * functions in SQL or PL/pgSQL — nothing cluster-wide, nothing that reaches
 * files or programs; scripts/corpus_sql.ts) run directly through postgres.js
 * in a scratch database `dbport_corpus` made for the run and dropped after;
 * its plain reads (the parser's SELECT without INTO, locking clauses or
 * data-changing parts) go to an in-process dbport server as `execute_query`
 * calls with a readOnly token on a readOnly connection to that database.
 *
 * A refusal is dbport's own answer (`denied`, `invalid_argument`, or
 * `-33007` when it judged the read a write); an
 * engine error (`query_failed`: the regression files expect many) and a
 * timeout are counted apart. Bounded: `--timeout S` per statement (5),
 * `--minutes M` for the whole run (60), `--files a,b` for some files only.
 * The PostgreSQL server is DBPORT_CORPUS_POSTGRES_URL, else
 * DBPORT_TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/test.
 *
 * @module
 */

import { parseArgs } from "node:util";
import postgres from "postgres";
import { saveConnections } from "../lib/app/connections.ts";
import { inAppDir } from "../lib/app/paths.ts";
import { silentLogger } from "../lib/base/log.ts";
import { CONNECTIONS_FILE } from "../lib/base/identity.ts";
import { MODERN_VERSION } from "../lib/protocol/versions.ts";
import { startServer } from "../lib/serve.ts";
import {
  calledFunctions,
  corpusStatements,
  loadParser,
  messageShape,
} from "./corpus_sql.ts";

const DATABASE = "dbport_corpus";
/**
 * dbport's own refusals: denied, not one statement, and -33007 (the
 * statement was judged a write, which a readOnly token may not send).
 */
const REFUSALS = new Set(["denied", "invalid_argument", "wire -33007"]);
/** Reads in flight at once (the server's own limits stay in force). */
const CONCURRENCY = 4;

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    timeout: { type: "string", default: "5" },
    minutes: { type: "string", default: "60" },
    files: { type: "string" },
    out: { type: "string" },
  },
});
const dir = positionals[0] ?? Deno.env.get("DBPORT_CORPUS_DIR");
if (dir === undefined) {
  console.error(
    `Usage: deno task corpus DIR [--files a,b] [--timeout S] [--minutes M] [--out report.md]

DIR is src/test/regress/sql of a PostgreSQL source tree, for example:
  echo 'deb-src http://deb.debian.org/debian bookworm main' > /etc/apt/sources.list.d/src.list
  apt-get update && apt-get source --download-only postgresql-15
  tar xjf postgresql-15_*.orig.tar.bz2 --wildcards '*/src/test/regress/*'
  deno task corpus postgresql-15.*/src/test/regress/sql`,
  );
  Deno.exit(2);
}
const timeoutSeconds = Number(values.timeout);
const deadline = Date.now() + Number(values.minutes) * 60_000;
const serverUrl = Deno.env.get("DBPORT_CORPUS_POSTGRES_URL") ??
  Deno.env.get("DBPORT_TEST_POSTGRES_URL") ??
  "postgres://postgres@127.0.0.1:5432/test";

/** The files in schedule order (test_setup first), or by name. */
async function files(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir!)) {
    if (entry.isFile && entry.name.endsWith(".sql")) {
      names.push(entry.name.slice(0, -4));
    }
  }
  const schedule = await Deno.readTextFile(`${dir}/../parallel_schedule`).catch(
    () => "",
  );
  const order = schedule.split("\n").filter((line) => line.startsWith("test:"))
    .flatMap((line) => line.slice(5).trim().split(/\s+/));
  const listed = order.filter((name) => names.includes(name));
  const rest = names.filter((name) => !listed.includes(name)).sort();
  const all = [...listed, ...rest];
  const only = values.files?.split(",");
  return only === undefined ? all : all.filter((name) => only.includes(name));
}

const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`drop database if exists ${DATABASE} with (force)`);
await admin.unsafe(`create database ${DATABASE}`);
const url = new URL(serverUrl);
url.pathname = `/${DATABASE}`;
const setup = postgres(url.toString(), { max: 1, onnotice: () => {} });
/** The catalog's answers while the setup session may sit in a failed transaction. */
const catalog = postgres(url.toString(), { max: 2, onnotice: () => {} });
const home = await Deno.makeTempDir({ prefix: "dbport-corpus-" });
const connectionId = crypto.randomUUID();
await saveConnections(inAppDir(home, CONNECTIONS_FILE), [{
  id: connectionId,
  name: "corpus",
  engine: "postgres",
  url: url.toString(),
  externalAccess: "readOnly",
  aiPolicy: "alwaysAllow",
  safeMode: "silent",
}]);
const server = await startServer({ home, port: 0, log: silentLogger });
const { plaintext } = await server.tokens.create({
  name: "corpus",
  level: "readOnly",
  connections: null,
  expiresAt: null,
});
await server.syncTokens();
await loadParser();

/**
 * Why a read was judged a write (the -33007 answer does not say): the
 * VOLATILE functions it calls, as the scratch database's catalog says.
 */
async function volatileCalls(text: string): Promise<string> {
  const names = calledFunctions(text);
  const rows = names.length === 0 ? [] : await catalog.unsafe(
    "select distinct proname from pg_proc where provolatile = 'v' and proname = any($1) order by 1",
    [names],
  ).catch(() => []);
  return rows.length === 0
    ? "no VOLATILE function found"
    : `calls VOLATILE ${rows.map((row) => `${row.proname}()`).join(", ")}`;
}

let id = 0;
/** One execute_query call; the outcome's code and message. */
async function read(query: string): Promise<{ code: string; message: string }> {
  const params = {
    name: "execute_query",
    arguments: {
      connection_id: connectionId,
      query,
      max_rows: 1,
      timeout_seconds: timeoutSeconds,
    },
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": {
        name: "dbport-corpus",
        version: "1",
      },
    },
  };
  const response = await fetch(server.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN_VERSION,
      "mcp-method": "tools/call",
      "mcp-name": "execute_query",
      authorization: `Bearer ${plaintext}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: ++id,
      method: "tools/call",
      params,
    }),
    signal: AbortSignal.timeout((timeoutSeconds + 30) * 1000),
  });
  const text = await response.text();
  const json = JSON.parse(
    text.startsWith("{") ? text : text.replace(/^[\s\S]*?data: /, ""),
  );
  if (json.error !== undefined) {
    return {
      code: `wire ${json.error.code}`,
      message: String(json.error.message),
    };
  }
  if (json.result?.isError !== true) return { code: "ok", message: "" };
  const message = String(json.result.content?.[0]?.text ?? "");
  const colon = message.indexOf(":");
  return {
    code: message.slice(0, colon),
    message: message.slice(colon + 1).trim(),
  };
}

const counts = {
  files: 0,
  statements: 0,
  reads: 0,
  setup: 0,
  setupFailed: 0,
  skipped: 0,
};
const outcomes = new Map<string, number>();
const refusals = new Map<
  string,
  { count: number; example: string; file: string }
>();
const started = Date.now();
let stoppedEarly = false;
try {
  for (const name of await files()) {
    if (Date.now() > deadline) {
      stoppedEarly = true;
      break;
    }
    counts.files++;
    const text = await Deno.readTextFile(`${dir}/${name}.sql`);
    // A file may end inside a transaction, or an aborted one: each file
    // starts on a clean session.
    for (
      const reset of [
        "rollback",
        "reset all",
        `set statement_timeout = ${timeoutSeconds * 1000}`,
      ]
    ) await setup.unsafe(reset).catch(() => {});
    let fileReads = 0;
    let fileRefused = 0;
    // Reads between two setup statements are independent: sent CONCURRENCY
    // at a time; a setup statement waits for the reads before it.
    let batch: string[] = [];
    const flush = async () => {
      const texts = batch;
      batch = [];
      let next = 0;
      const worker = async () => {
        while (next < texts.length) {
          const text = texts[next++]!;
          const outcome = await read(text).catch((error) => ({
            code: "harness",
            message: String(error),
          }));
          outcomes.set(outcome.code, (outcomes.get(outcome.code) ?? 0) + 1);
          if (REFUSALS.has(outcome.code)) {
            fileRefused++;
            const key = outcome.code === "wire -33007"
              ? `judged a write (-33007): ${await volatileCalls(text)}`
              : `${outcome.code}: ${messageShape(outcome.message)}`;
            const known = refusals.get(key);
            if (known === undefined) {
              refusals.set(key, { count: 1, example: text, file: name });
            } else known.count++;
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    };
    for (const statement of corpusStatements(text)) {
      if (Date.now() > deadline) break;
      counts.statements++;
      if (statement.use === "skip") {
        counts.skipped++;
      } else if (statement.use === "setup") {
        await flush();
        counts.setup++;
        await setup.unsafe(statement.text).catch(() => counts.setupFailed++);
      } else {
        counts.reads++;
        fileReads++;
        batch.push(statement.text);
      }
    }
    await flush();
    console.error(`${name}: ${fileReads} reads, ${fileRefused} refused`);
  }
} finally {
  await server.stop();
  await setup.end();
  await catalog.end();
  await admin.unsafe(`drop database if exists ${DATABASE} with (force)`);
  await admin.end();
  await Deno.remove(home, { recursive: true });
}

const refused = [...refusals.values()].reduce((n, r) => n + r.count, 0);
const lines = [
  `# dbport corpus: PostgreSQL regression suite through the read path`,
  "",
  `- source: ${dir}`,
  `- files: ${counts.files}${
    stoppedEarly ? " (stopped at --minutes)" : ""
  }; statements: ${counts.statements}; run in ${
    Math.round((Date.now() - started) / 1000)
  } s`,
  `- setup statements run directly: ${counts.setup} (${counts.setupFailed} failed, as many regression statements are meant to); left out: ${counts.skipped} (psql variables, parse errors, cluster-wide or reaching statements, non-plain SELECTs)`,
  `- plain reads sent: ${counts.reads}; **refused by dbport: ${refused}**`,
  `- outcomes: ${
    [...outcomes].sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`)
      .join(", ")
  }`,
  "",
  "## Refusals by reason",
  "",
  "| count | reason | example (file) |",
  "| ---: | --- | --- |",
  ...[...refusals].sort((a, b) => b[1].count - a[1].count).map(([reason, r]) =>
    `| ${r.count} | ${reason.replaceAll("|", "\\|")} | \`${
      r.example.replace(/\s+/g, " ").slice(0, 100).replaceAll("|", "\\|")
        .replaceAll("`", "'")
    }\` (${r.file}) |`
  ),
];
const report = lines.join("\n") + "\n";
if (values.out !== undefined) await Deno.writeTextFile(values.out, report);
console.log(report);
