/**
 * An outsider's attacks (stop 53) on this stop's changes: PostgreSQL TLS
 * client certificates (`sslcert`, `sslkey`, `sslpassword`: pg_tls.ts
 * `clientCertOf`, `clientCertRefusal`, `secured`; the passphrase as a
 * secret: target.ts `queryStringSecrets`, console/url_secrets.ts),
 * `target_session_attrs` (pg_session_attrs.ts), the XML table functions
 * refused by name (classifier_words.ts `FILE_OR_CODE_FUNCTIONS`), and the
 * stops of exports and cancel requests (pg_stream.ts `pump`, pg_wired.ts
 * `cancelRequest`, pg_pools.ts `close`). Through the MCP endpoint, the
 * console's Edit page and the driver API, against the real PostgreSQL.
 *
 * What I tried (FINDING: fails today; held: passes, pinned here or only
 * probed):
 * - FIXED (CREATE FUNCTION/PROCEDURE in any language but SQL is refused
 *   to every token, by allowlist; a reaching call found in a SQL body,
 *   behind an operator, a cast or a view is `reach` too, never only a
 *   write: pg_reach.ts `opaqueFunction`, pg_vet.ts `Findings.reach`)
 *   a readWrite token on a superuser login reads what is refused
 *   to every token by name — a server file (`pg_read_file`), pg_authid's
 *   password verifiers (`table_to_xml('pg_catalog.pg_authid', …)`, or
 *   `RETURN QUERY EXECUTE 'select … from pg_' || 'authid'`) — by wrapping
 *   the call in a `LANGUAGE plpgsql` function it creates (one call) and
 *   then selects (a second call). The catalog check sees a plpgsql
 *   function (a write: allowed to the token) and never its body; `DO` is
 *   refused as procedural code, `CREATE FUNCTION … LANGUAGE plpgsql` is
 *   not. Measured: `select a53_x.f()` answered PG_VERSION's text ("15") and
 *   the XML of every pg_authid row (rolpassword included).
 * - FIXED (as above) the same for a program: `execute 'copy … from program ''echo
 *   a53-ran'''` in a plpgsql function the write token creates ran the
 *   program on the database's host (answered "a53-ran"), while `COPY …
 *   PROGRAM`, `LANGUAGE c` ("runs outside the database"), `LOAD`,
 *   `CREATE EXTENSION` and `ALTER SYSTEM` are each denied by name.
 * - FIXED (target.ts `isSecretParam` decodes a parameter's name; the
 *   console masks by it) the key's passphrase written with its name
 *   percent-encoded
 *   (`ssl%70assword=…`, `%73slpassword=…`) is the passphrase dbport uses
 *   (pg_tls.ts reads the query string with URLSearchParams, which decodes
 *   names: the encrypted test key is decrypted and the session answers),
 *   but the console's Edit page shows it in its HTML (url_secrets.ts masks
 *   the literal `sslpassword=` only) and `queryStringSecrets` does not count
 *   it as a secret (so no message would redact it).
 * - FIXED an AI client's connect error names the client certificate's and
 *   key's files in full ("the client certificate file the URL's sslcert
 *   names (/work/…/x.pem) could not be read", "… sslkey names (…): a wrong
 *   passphrase", "… is not the key of the certificate …"): redact.ts hides
 *   `sslcert=`/`sslkey=` as key=value secrets and paths only under a few
 *   roots (/home, /Users, /etc, …), not "names (<path>)" elsewhere.
 * - FIXED `sslcert` (or `sslkey`) naming a FIFO (a named pipe nobody
 *   writes, or any file whose read never ends): the file's read has no
 *   deadline (the TLS connect timeout starts after it), so each call waits
 *   its whole timeout (25 s measured with a 25 s timeout, past the 10 s
 *   connect timeout) and fails as "ran out while the query waited for a
 *   database session" — no named connect error; the pending read is kept
 *   (`client ??=`), so every later call of the driver waits the same way;
 *   `close()` then took 3.0 s (1 s `endPool` + 2 s `socketsGone`).
 * - FIXED a driver closed while a session's TLS waits for the answer to
 *   its SSLRequest (a hop that takes the connection and never answers):
 *   close() took 3.0 s (1.0 s without TLS) and returned with the socket
 *   still open; the hop saw it closed ~9 s after close began, at
 *   `negotiate`'s 10 s connect alarm.
 * - FIXED (pg_startup.ts `checkedRole`: a one-host URL's sessions are checked
 *   by dbport, the server's role named) `target_session_attrs=read-only`
 *   (or `standby`) on a server that
 *   is a primary fails as "write CONNECTION_DESTROYED [redacted]", quickly
 *   but without saying why (no server in recovery / not a standby).
 * - held: `sslcert` naming a directory fails at once, named ("a
 *   directory"); a file that is no PEM certificate (deno.json) is named
 *   without showing its contents; `sslcert=`/`sslkey=` empty fail as
 *   unreadable; half a pair, `sslpassword` alone, `sslmode=disable` with a
 *   pair are refused before connecting (pinned below: a file's contents never
 *   reach the message).
 * - held (probed): U& escapes (`U&"table\005fto_xml"`, `UESCAPE '!'`),
 *   `pg_catalog."table_to_xml"`, `table_to_xmlschema` inside `xmlconcat`,
 *   `query_to_xml` — all denied by name for a readWrite token; `DO` denied;
 *   several statements in one call refused (`PREPARE …; EXECUTE …`).
 *   `pg_current_logfile()` answers (null here: no logging collector) — a
 *   path at most, not a file's contents; `pg_logical_slot_peek_changes`
 *   fails on wal_level (not probed further).
 * - held (probed): `sslpassword=a&sslpassword=b` and
 *   `sslpassword=&sslpassword=b`: pg_tls uses the first; every value is a
 *   secret for messages (`queryStringSecrets`), the Edit page masks only the
 *   first occurrence (the second, unused, is shown). `SSLPASSWORD=` (another
 *   case) is not read as the passphrase by pg_tls.
 * - held (probed): `target_session_attrs` `READ-WRITE` refused by name before
 *   connecting; repeated parameters use the first (`read-write&…=standby`
 *   answered on the primary); a percent-encoded name or value is decoded
 *   and read the same way; `prefer-standby` on one host answers.
 * - held (probed): a server whose certificate fails verify-full/verify-ca
 *   (wrong host name, `other.pem`) and that asks for a client certificate
 *   never got it (a node:tls server recording the peer certificate saw no
 *   handshake complete; with the right certificate it saw `CN=postgres`).
 * - held (probed): a percent-encoded `sslmode`/`ssl`/`sslrootcert`/`sslcert`
 *   name or value (`ssl%6dode=require`, `%73slrootcert=CA`, `ssl=%74rue`),
 *   `sslmode=Require`/`VERIFY-FULL`/`verify-full%20`: each asks for TLS
 *   (the test server refuses it: "does not support SSL/TLS"), none goes on
 *   in clear. `sslrootcert` with `sslmode=disable` is passed to the server
 *   as a startup parameter (refused: unrecognized parameter) — the path
 *   only, the owner's word for clear text.
 * - held (probed): `target_session_attrs` read-write, any, prefer-standby
 *   and repeated values through the TLS proxy with an encrypted client key:
 *   each session presented the certificate and answered.
 * - held (probed): an export whose backend is ended mid-way
 *   (pg_terminate_backend) answers an error (not_connected) and leaves no
 *   file; the next read answers. maxExportRows (1001 rows over 1000) and
 *   maxExportBytes (a 200 kB cell, many rows) in CSV and JSON lines: each
 *   denied "the export stopped: …; the partial file was removed", never a
 *   short file answered as complete.
 * - held: an export (export_query) that times out (2 s) mid-way answers a
 *   timeout ("the query was stopped on the database") at ~3 s, leaves no
 *   file, and another client's export running beside it on the same
 *   connection completes with every row; no session of the connection is
 *   left in a transaction or running (pinned below).
 * - Not attacked for lack of time: the SSH tunnel with client certificates
 *   and target_session_attrs, MariaDB, the activity log's copy of a
 *   connect error.
 *
 * @module
 */

import { assert, assertEquals } from "@std/assert";
import postgres from "postgres";
import { probeConnection } from "../../lib/app/connection_probe.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE } from "../../lib/base/identity.ts";
import { createConsoleApp } from "../../lib/console/app.tsx";
import { ConsoleEvents } from "../../lib/console/events.ts";
import { ConsoleKeys } from "../../lib/console/keys.ts";
import { PendingApprovals } from "../../lib/console/pending.ts";
import { defaultSshContext } from "../../lib/db/open_driver.ts";
import { secured } from "../../lib/db/postgres/pg_tls.ts";
import { readTextWithin } from "../../lib/db/postgres/pg_tls_files.ts";
import { tlsPlan } from "../../lib/db/postgres/pg_tls_plan.ts";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import { queryStringSecrets } from "../../lib/db/target.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture, POSTGRES_URL } from "../_db.ts";
import {
  TEST_CA_FILE,
  TEST_CLIENT,
  TEST_KEY_PASSPHRASE,
  tlsPgProxy,
} from "../_tls_pg_proxy.ts";
import { callTool } from "../_tool_call.ts";
import { answer } from "../_outsider.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A server with a readWrite connection on the superuser test login. */
async function writeServer(name: string) {
  const saved = savedConnection(
    { engine: "postgres", url: POSTGRES_URL },
    name,
    { externalAccess: "readWrite", safeMode: "silent" },
  );
  const server = await serverWith([saved]);
  const token = await server.mint("readWrite");
  const run = (query: string) =>
    callTool(server, "execute_query", {
      connection_id: saved.id,
      query,
      max_rows: 50,
    }, { authorization: `Bearer ${token.plaintext}` });
  return { server, run };
}

Deno.test({
  name:
    "a readWrite token read a server file through pg_read_file (refused to every token by name) inside a plpgsql function it created",
  ...needs("postgres"),
  async fn() {
    // What it does: a readWrite token on the superuser test login sends
    // `create function a53_x.f() … language plpgsql as $$ begin return
    // pg_read_file('PG_VERSION'); end $$`, then `select a53_x.f()`.
    // What happens: both answer; the second with the server file's text.
    // `select pg_read_file('PG_VERSION')` itself is denied ("reaches the
    // file system or runs code"), and so is `DO $$ … $$`.
    // What should happen: a file never reaches a client by name or by a
    // function it wrapped (e.g. refuse `CREATE FUNCTION` in a language
    // other than sql to AI tokens, or its call: its body is not checked).
    const schema = `a53_f_${crypto.randomUUID().slice(0, 8)}`;
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { server, run } = await writeServer("PlpgsqlFile");
    try {
      const direct = await run("select pg_read_file('PG_VERSION')");
      assertEquals(direct.json.result?.isError, true, direct.text);
      await run(`create schema ${schema}`);
      await run(
        `create function ${schema}.f() returns text language plpgsql as $$ begin return pg_read_file('PG_VERSION'); end $$`,
      );
      const wrapped = await run(`select ${schema}.f() as file`);
      const rows = wrapped.json.result?.structuredContent?.rows;
      assertEquals(
        wrapped.json.result?.isError,
        true,
        `the file reached the client: ${JSON.stringify(rows)}`,
      );
    } finally {
      await server[Symbol.asyncDispose]();
      await admin.unsafe(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "a readWrite token read pg_authid's password verifiers through table_to_xml or EXECUTE inside a plpgsql function it created",
  ...needs("postgres"),
  async fn() {
    // What it does: as above, `create function … language plpgsql as $$
    // begin return table_to_xml('pg_catalog.pg_authid'::regclass, true,
    // false, ''); end $$` and one that `return query execute 'select
    // rolname || coalesce(rolpassword, …) from pg_' || 'authid'`.
    // What happens: `select` of either answers every role of pg_authid
    // with its rolpassword (null on this trust-only server, the column is
    // there: <rolpassword xsi:nil="true"/>).
    // What should happen: docs/security.md "Credential catalogs": pg_authid
    // is never an AI read, whoever the login.
    const schema = `a53_a_${crypto.randomUUID().slice(0, 8)}`;
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { server, run } = await writeServer("PlpgsqlAuthid");
    try {
      await run(`create schema ${schema}`);
      await run(
        `create function ${schema}.x() returns xml language plpgsql as $$ begin return table_to_xml('pg_catalog.pg_authid'::regclass, true, false, ''); end $$`,
      );
      await run(
        `create function ${schema}.e() returns setof text language plpgsql as $$ begin return query execute 'select rolname::text || '':'' || coalesce(rolpassword, ''(none)'') from pg_' || 'authid'; end $$`,
      );
      const leaks: string[] = [];
      for (
        const call of [`select ${schema}.x()`, `select * from ${schema}.e()`]
      ) {
        const got = await run(call);
        const text = JSON.stringify(got.json.result?.structuredContent ?? "");
        if (/rolpassword|postgres:/.test(text)) {
          leaks.push(`${call} -> ${text.slice(0, 200)}`);
        }
      }
      assertEquals(leaks, [], "pg_authid reached the client");
    } finally {
      await server[Symbol.asyncDispose]();
      await admin.unsafe(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "a readWrite token ran a program on the database's host (COPY … FROM PROGRAM, refused to every token) inside a plpgsql function it created",
  ...needs("postgres"),
  async fn() {
    // What it does: `create function … language plpgsql as $$ begin
    // execute 'create temp table … (x text)'; execute 'copy … from program
    // ''echo a53-ran'''; return (select x from …); end $$`, then selects it.
    // What happens: the function is created and its call answers
    // "a53-ran": the echo ran as the server's OS user. `COPY … PROGRAM`
    // itself is denied ("COPY reads or writes files, programs …"), and so
    // are `LANGUAGE c`, `LOAD`, `CREATE EXTENSION` and `DO` — not a
    // plpgsql body that runs the same COPY through EXECUTE.
    // What should happen: no AI token gets a program run (docs/security.md:
    // functions that reach files or programs are refused).
    const schema = `a53_p_${crypto.randomUUID().slice(0, 8)}`;
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { server, run } = await writeServer("PlpgsqlProgram");
    try {
      const direct = await run("copy (select 1) to program 'true'");
      assertEquals(direct.json.result?.isError, true, direct.text);
      await run(`create schema ${schema}`);
      await run(
        `create function ${schema}.p() returns text language plpgsql as $$ begin execute 'create temp table if not exists a53_out (x text)'; execute 'copy a53_out from program ''echo a53-ran'''; return (select x from a53_out limit 1); end $$`,
      );
      const ran = await run(`select ${schema}.p() as out`);
      const rows = ran.json.result?.structuredContent?.rows;
      assert(
        !JSON.stringify(rows ?? "").includes("a53-ran"),
        `a program ran on the database's host: ${JSON.stringify(rows)}`,
      );
      assertEquals(ran.json.result?.isError, true, ran.text);
    } finally {
      await server[Symbol.asyncDispose]();
      await admin.unsafe(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  },
});

Deno.test({
  name:
    "an AI client's error named the client certificate and key files in full (the URL's sslcert/sslkey paths), which key=value masking hid; the owner's test still names them",
  ...needs("postgres"),
  async fn() {
    // What it does: saved connections (readOnly)
    // whose URLs name a client certificate that does not exist, an encrypted
    // key with a wrong sslpassword, and a key that is not the certificate's;
    // an AI client calls execute_query on each.
    // What happens: each answer is "not_connected: cannot reach …: the
    // client certificate file the URL's sslcert names (/work/…/a53-missing
    // .pem) could not be read …", "… sslkey names (/work/…/client
    // -encrypted.key): a wrong passphrase", "… (…/client.key) is not the key
    // of the certificate sslcert names (…/stranger.pem)": the owner's file
    // locations, in full. redact.ts masks `sslcert=…`/`sslkey=…` as
    // key=value secrets and only paths under a few roots (/home, /Users,
    // /etc, …: on such a checkout this test passes); "names (<path>)"
    // escapes the key=value rule, so /work, /usr/local, /opt's … reach the client.
    // What should happen: the client is told the file could not be used,
    // never where the owner keeps it (the owner's `connections test` names
    // it).
    const missing = new URL("../fixtures/tls/a53-missing.pem", import.meta.url)
      .pathname;
    const cases = [
      `sslmode=require&sslcert=${missing}&sslkey=${TEST_CLIENT.key}`,
      `sslmode=require&sslcert=${TEST_CLIENT.cert}&sslkey=${TEST_CLIENT.encryptedKey}&sslpassword=a53-wrong`,
      `sslmode=require&sslcert=${TEST_CLIENT.strangerCert}&sslkey=${TEST_CLIENT.key}`,
    ];
    const connections = cases.map((query, i) =>
      savedConnection(
        { engine: "postgres", url: `${POSTGRES_URL}?${query}` },
        `CertPath${i}`,
      )
    );
    await using server = await serverWith(connections);
    const shown: string[] = [];
    for (const connection of connections) {
      const got = await callTool(server, "execute_query", {
        connection_id: connection.id,
        query: "select 1",
      });
      const text: string = got.json.result?.content?.[0]?.text ?? "";
      assert(text.startsWith("not_connected: "), text);
      for (
        const file of [
          "a53-missing.pem",
          "client-encrypted.key",
          "client.key",
          "stranger.pem",
        ]
      ) {
        if (text.includes(file)) shown.push(`${file}: ${text.slice(0, 160)}`);
      }
    }
    assertEquals(shown, [], "file locations reached the AI client");
    // The owner's `connections test` (probeConnection: the owner's
    // audience) still names the parameter and the file at fault.
    const owner = await probeConnection(
      connections[0]!,
      "/nonexistent/known_hosts",
      defaultSshContext([]),
    );
    assertEquals(owner.outcome, "failed");
    const said = owner.outcome === "failed" ? owner.message : "";
    assert(said.includes(`sslcert names (${missing})`), said);
  },
});

Deno.test({
  name:
    "held: the XML table functions in quotes, schema-qualified, in U& escapes or behind UESCAPE are denied to a write token",
  ...needs("postgres"),
  async fn() {
    const { server, run } = await writeServer("XmlForms");
    try {
      const forms = [
        `select pg_catalog."table_to_xml"('pg_catalog.pg_authid'::regclass, true, false, '')`,
        `select PG_CATALOG.TABLE_TO_XML('pg_catalog.pg_authid'::regclass, true, false, '')`,
        `select U&"table\\005fto_xml"('pg_catalog.pg_authid'::regclass, true, false, '')`,
        `select U&"t!0061ble_to_xml" UESCAPE '!' ('pg_catalog.pg_authid'::regclass, true, false, '')`,
        `select xmlconcat(table_to_xmlschema('pg_catalog.pg_authid'::regclass, true, false, ''))`,
        `select schema_to_xml('pg_catalog', true, false, '')`,
        `select query_to_xml('select * from pg_authid', true, false, '')`,
        `select U&"pg\\005fread\\005ffile"('PG_VERSION')`,
        `do $$ begin perform 1; end $$`,
      ];
      for (const form of forms) {
        const got = await run(form);
        const text: string = got.json.result?.content?.[0]?.text ?? "";
        assert(text.startsWith("denied: "), `${form}\n-> ${text}`);
      }
    } finally {
      await server[Symbol.asyncDispose]();
    }
  },
});

Deno.test({
  name:
    "a driver closed while a session's TLS waited for the answer to its SSLRequest left that socket open until the 10 s TLS alarm, after a 3 s close",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // What it does: a hop that takes TCP connections and never answers (a
    // hung middlebox, a tunnel whose far end stalls); a driver on it with
    // sslmode=require; a read with a 1 s timeout; then `driver.close()`.
    // What happens: the read fails at 1 s (waited for a session); close()
    // takes 3.0 s (1.0 s without TLS) and returns with the socket still
    // open: the hop saw it closed only ~9 s after close began, when
    // pg_tls.ts `negotiate`'s connect alarm (10 s from the socket's open)
    // destroyed it. The same URL without TLS: close 1.0 s, the socket
    // closed by then. (sanitizeOps off: the alarm outlives the close.)
    // What should happen: pg_pools.ts `close`: "Nothing of the pools
    // outlives the close: their sockets closed" — a socket still in its
    // TLS negotiation is one of them.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    let open = 0;
    const held: Promise<void>[] = [];
    const serving = (async () => {
      for await (const conn of listener) {
        open++;
        held.push((async () => {
          const buffer = new Uint8Array(64);
          try {
            while ((await conn.read(buffer)) !== null) { /* never answer */ }
          } catch { /* reset */ }
          open--;
          try {
            conn.close();
          } catch { /* closed */ }
        })());
      }
    })();
    const driver = openPostgres({
      url: `postgres://postgres@127.0.0.1:${port}/test?sslmode=require`,
      secrets: [],
      wiredReads: true,
    });
    let closeMs = 0;
    let openAfter = -1;
    try {
      const read = await answer(driver, "select 1", 1000);
      assert(!read.said.startsWith("answered"), read.said);
      assertEquals(open, 1, "the session's socket reached the hop");
      const started = performance.now();
      await driver.close();
      closeMs = performance.now() - started;
      await sleep(300);
      openAfter = open;
    } finally {
      listener.close();
      await serving.catch(() => {});
      // Wait the socket out (the alarm) so nothing of this test lingers.
      for (let i = 0; i < 40 && open > 0; i++) await sleep(250);
      await Promise.all(held);
    }
    assertEquals(
      openAfter,
      0,
      `sockets to the hop still open 300 ms after close() (which took ${
        Math.round(closeMs)
      } ms)`,
    );
    // As long as without TLS (1.0 s: the pools' end), not 3 s.
    assert(closeMs < 2000, `close() took ${Math.round(closeMs)} ms`);
  },
});

/** The console app over `server`'s connections, logged in. */
async function consoleOver(
  server: Awaited<ReturnType<typeof serverWith>>,
  port: number,
) {
  const keys = new ConsoleKeys();
  const host = { host: `127.0.0.1:${port}` };
  const at = `http://127.0.0.1:${port}${keys.prefix}`;
  const shutdown = new AbortController();
  const app = createConsoleApp({
    port: () => port,
    keys,
    pending: new PendingApprovals(),
    events: new ConsoleEvents(),
    settings: () => server.server.state.settings,
    connections: server.server.connections,
    connectionsPath: inAppDir(server.home, CONNECTIONS_FILE),
    pool: server.server.pool,
    activity: server.server.activity,
    history: server.server.history,
    queries: server.server.queries,
    tokens: server.server.tokens,
    tokensChanged: () => server.server.syncTokens(),
    now: Date.now,
    log: () => {},
    shutdown: shutdown.signal,
  });
  const login = await app.request(`${at}/?key=${keys.key}`, { headers: host });
  const cookie = login.headers.get("set-cookie")?.split(";")[0] ?? "";
  return {
    get: (path: string) =>
      app.request(`${at}${path}`, { headers: { ...host, cookie } }),
    stop: () => shutdown.abort(),
  };
}

Deno.test({
  name:
    "a client key's sslpassword written with a percent-encoded name (ssl%70assword=) was the passphrase dbport used, yet the console's Edit page showed it and it was no secret for messages",
  ...needs("postgres"),
  async fn() {
    // What it does: a saved connection's URL names the encrypted test key
    // and its passphrase as `ssl%70assword=<passphrase>` (what a URL
    // encoder or a template may write); the driver connects through a
    // proxy that requires the client certificate; the owner opens the
    // connection's Edit page in the console.
    // What happens: the session answers (pg_tls.ts decodes the parameter's
    // name: the key was decrypted with it), and the Edit page's HTML holds
    // the passphrase in clear (url_secrets.ts masks `sslpassword=` only);
    // `queryStringSecrets` (the secrets every message is redacted of)
    // answers none for the URL.
    // What should happen: the passphrase dbport uses is a secret in every
    // form of its name, or a name dbport would not read as `sslpassword` is
    // not read as one.
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url), { clientCerts: true });
    try {
      const url = new URL(proxy.url);
      url.searchParams.set("sslmode", "require");
      url.searchParams.set("sslcert", TEST_CLIENT.cert);
      url.searchParams.set("sslkey", TEST_CLIENT.encryptedKey);
      const saved = `${url}&ssl%70assword=${TEST_KEY_PASSPHRASE}`;
      const driver = openPostgres({
        url: saved,
        secrets: [],
        wiredReads: true,
      });
      let used: string;
      try {
        used = (await answer(driver, "select 1 as one")).said;
      } finally {
        await driver.close();
      }
      assertEquals(used, "answered [[1]]", "dbport used the passphrase");
      assert(proxy.stats.clientCerts > 0, "the certificate was presented");
      const connection = savedConnection(
        { engine: "postgres", url: saved },
        "EncodedPass",
      );
      await using server = await serverWith([connection]);
      const pages = await consoleOver(server, 4153);
      let html = "";
      try {
        const page = await pages.get(`/connections/${connection.id}/edit`);
        assertEquals(page.status, 200);
        html = await page.text();
      } finally {
        pages.stop();
      }
      assert(html.includes("EncodedPass"), "the Edit page of the connection");
      const problems: string[] = [];
      if (html.includes(TEST_KEY_PASSPHRASE)) {
        problems.push("the Edit page's HTML holds the passphrase");
      }
      if (!queryStringSecrets(saved).includes(TEST_KEY_PASSPHRASE)) {
        problems.push("queryStringSecrets does not count it");
      }
      assertEquals(problems, []);
    } finally {
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "sslcert naming a FIFO made every read wait its whole timeout (past the 10 s connect timeout) and fail as waiting for a session, never as the certificate's named error",
  ...needs("postgres"),
  async fn() {
    // What it does: `sslcert=<a FIFO nobody writes>&sslkey=<the test key>`
    // with sslmode=require, a read with a 14 s timeout.
    // What happens: `Deno.readTextFile` of the FIFO waits for a writer for
    // ever; `secured` reads the files before `negotiate` starts the TLS
    // connect timeout, so the read waits its whole 14 s and fails "the
    // statement timeout of 14 s ran out while the query waited for a
    // database session"; the pending read is kept (`client ??=`) and every
    // later call waits the same way.
    // What should happen: a connect error within the connect timeout (10 s)
    // naming sslcert, as for a file that cannot be read.
    const dir = await Deno.makeTempDir({ prefix: "a53-fifo-" });
    const fifo = `${dir}/client.pem`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert(made.success, "mkfifo");
    const url = new URL(POSTGRES_URL);
    url.searchParams.set("application_name", "a53_fifo");
    url.searchParams.set("sslmode", "require");
    url.searchParams.set("sslcert", fifo);
    url.searchParams.set("sslkey", TEST_CLIENT.key);
    const driver = openPostgres({
      url: url.toString(),
      secrets: [],
      wiredReads: true,
    });
    let first: { said: string; ms: number };
    try {
      first = await answer(driver, "select 1 as one", 14_000);
    } finally {
      // Give a blocked read a writer and its end: nothing stays waiting
      // (opened for reading too: a FIFO nobody reads would block the open).
      const writer = await Deno.open(fifo, { read: true, write: true });
      writer.close();
      await sleep(50);
      await driver.close();
      await Deno.remove(dir, { recursive: true });
    }
    assert(
      first.ms < 3_000 &&
        /^connect: .*sslcert.*not a regular file \(a FIFO\)/.test(first.said),
      `answered after ${Math.round(first.ms)} ms: ${first.said}`,
    );
  },
});

Deno.test({
  name:
    "sslrootcert naming a FIFO is refused at once as a connect error naming sslrootcert",
  ...needs("postgres"),
  async fn() {
    // The CA file's read had the same unbounded read as sslcert's.
    const dir = await Deno.makeTempDir({ prefix: "a53-fifo-ca-" });
    const fifo = `${dir}/ca.pem`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert(made.success, "mkfifo");
    const url = new URL(POSTGRES_URL);
    url.searchParams.set("application_name", "a53_fifo_ca");
    url.searchParams.set("sslmode", "verify-full");
    url.searchParams.set("sslrootcert", fifo);
    const driver = openPostgres({
      url: url.toString(),
      secrets: [],
      wiredReads: true,
    });
    const said: { said: string; ms: number }[] = [];
    try {
      said.push(await answer(driver, "select 1", 14_000));
    } finally {
      const writer = await Deno.open(fifo, { read: true, write: true });
      writer.close();
      await sleep(50);
      await driver.close();
      await Deno.remove(dir, { recursive: true });
    }
    for (const got of said) {
      assert(
        got.ms < 3_000 &&
          /^connect: .*sslrootcert.*not a regular file \(a FIFO\)/.test(
            got.said,
          ),
        `answered after ${Math.round(got.ms)} ms: ${got.said}`,
      );
    }
  },
});

Deno.test("a CA file refused (a FIFO) is read again at the next session once put right, never the failure kept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "a53-fifo-again-" });
  const file = `${dir}/ca.pem`;
  const made = await new Deno.Command("mkfifo", { args: [file] }).output();
  assert(made.success, "mkfifo");
  const plan = tlsPlan(`postgres://db.test/x?sslrootcert=${file}`, {
    host: ["db.test"],
  });
  assert(plan?.caFile === file, JSON.stringify(plan));
  // Nothing is opened here: once the CA is read, the opener's failure.
  const factory = secured(
    () => Promise.reject(new Error("a53: the socket's open")),
    plan,
  );
  const failure = async () => {
    const socket = await factory();
    let said = "closed without an error";
    socket.once("error", (error: Error) => said = error.message);
    // The failed socket errs a timer later, and closes a timer after.
    await new Promise((resolve) => socket.once("close", resolve));
    return said;
  };
  try {
    const first = await failure();
    assert(/sslrootcert.*not a regular file \(a FIFO\)/.test(first), first);
    await Deno.remove(file);
    await Deno.copyFile(TEST_CA_FILE, file);
    assertEquals(await failure(), "a53: the socket's open");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file read that never ends (a FIFO past the stat: a race, a slow file system) fails at its deadline, and a close stops it at once", async () => {
  // `readTextWithin` without its stat check: the read of a FIFO nobody
  // writes blocks; the deadline (and the driver's close) ends the wait.
  const dir = await Deno.makeTempDir({ prefix: "a53-fifo-read-" });
  const fifo = `${dir}/x.pem`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert(made.success, "mkfifo");
  const outcomes: string[] = [];
  try {
    let started = performance.now();
    await readTextWithin(fifo, 300).then(
      () => outcomes.push("read"),
      (error) =>
        outcomes.push(
          `${error.message} after ${
            performance.now() - started < 1_000 ? "<1s" : "too long"
          }`,
        ),
    );
    const stop = new AbortController();
    started = performance.now();
    setTimeout(() => stop.abort(), 100);
    await readTextWithin(fifo, 10_000, stop.signal).then(
      () => outcomes.push("read"),
      (error) =>
        outcomes.push(
          `${error.code}: ${error.message} after ${
            performance.now() - started < 1_000 ? "<1s" : "too long"
          }`,
        ),
    );
  } finally {
    // The blocked reads' threads: given a writer and its end.
    const writer = await Deno.open(fifo, { read: true, write: true });
    writer.close();
    await sleep(100);
    await Deno.remove(dir, { recursive: true });
  }
  assertEquals(outcomes, [
    "its read did not end within 0.3 s after <1s",
    "CONNECTION_ENDED: the connection was closed while its TLS was negotiated after <1s",
  ]);
});

Deno.test({
  name:
    "target_session_attrs=read-only on a primary failed as 'write CONNECTION_DESTROYED', never saying that no server is a standby",
  ...needs("postgres"),
  async fn() {
    // What it does: a single-host URL to the test server (a primary) with
    // target_session_attrs=read-only, then standby; a read.
    // What happens: each fails at once (~100 ms) "write
    // CONNECTION_DESTROYED [redacted]": postgres.js destroyed the session
    // it judged the wrong kind, and nothing names why.
    // What should happen: a connect error that says the server is not in
    // recovery (a standby), as libpq's "server is not in hot standby mode".
    const said: string[] = [];
    for (const value of ["read-only", "standby"]) {
      const url = new URL(POSTGRES_URL);
      url.searchParams.set("application_name", "a53_tsa");
      url.searchParams.set("target_session_attrs", value);
      const driver = openPostgres({
        url: url.toString(),
        secrets: [],
        wiredReads: true,
      });
      try {
        said.push(`${value}: ${(await answer(driver, "select 1")).said}`);
      } finally {
        await driver.close();
      }
    }
    for (const line of said) {
      assert(!line.includes("answered"), line);
      assert(/standby|recovery|read-only server/i.test(line), line);
    }
  },
});

Deno.test({
  name:
    "held: a client certificate file that is a directory or no PEM is named at once, its contents never in the message",
  ...needs("postgres"),
  async fn() {
    const repoFile = new URL("../../deno.json", import.meta.url).pathname;
    const contents = (await Deno.readTextFile(repoFile)).slice(0, 40);
    const dir = await Deno.makeTempDir({ prefix: "a53-dir-" });
    try {
      for (const cert of [dir, repoFile]) {
        const url = new URL(POSTGRES_URL);
        url.searchParams.set("sslmode", "require");
        url.searchParams.set("sslcert", cert);
        url.searchParams.set("sslkey", TEST_CLIENT.key);
        const driver = openPostgres({
          url: url.toString(),
          secrets: [],
          wiredReads: true,
        });
        let got: { said: string; ms: number };
        try {
          got = await answer(driver, "select 1", 10_000);
        } finally {
          await sleep(50);
          await driver.close();
        }
        assert(got.ms < 3000, `${cert}: ${Math.round(got.ms)} ms`);
        assert(/^connect: .*sslcert/.test(got.said), got.said);
        assert(!got.said.includes(contents.slice(0, 20)), got.said);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "held: an export that times out mid-way answers a timeout, leaves no file, and another client's export beside it completes",
  ...needs("postgres"),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "a53-exports-" });
    const app = `a53exp_${crypto.randomUUID().slice(0, 8)}`;
    const saved = savedConnection(
      { engine: "postgres", url: `${POSTGRES_URL}?application_name=${app}` },
      "Exports",
    );
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    try {
      await using server = await serverWith([saved], {
        exportDirectory: `${dir}/exports`,
      });
      const started = performance.now();
      let stoppedMs = 0;
      const [stopped, other] = await Promise.all([
        callTool(server, "export_query", {
          connection_id: saved.id,
          query:
            "select g as id, repeat(md5(g::text), 10) as f from generate_series(1, 200000000) g",
          format: "csv",
          timeout_seconds: 2,
        }).then((got) => {
          stoppedMs = performance.now() - started;
          return got;
        }),
        callTool(server, "export_query", {
          connection_id: saved.id,
          query:
            "select g, md5(g::text) as h from generate_series(1, 300000) g",
          format: "csv",
          timeout_seconds: 60,
        }),
      ]);
      assert(
        /timed out|timeout/i.test(JSON.stringify(stopped.json)),
        JSON.stringify(stopped.json).slice(0, 300),
      );
      assert(stoppedMs < 6000, `the stopped export: ${stoppedMs} ms`);
      const done = other.json.result?.structuredContent;
      assertEquals(done?.rows, 300_000, JSON.stringify(other.json));
      const files: string[] = [];
      for await (const entry of Deno.readDir(`${dir}/exports`)) {
        files.push(`${dir}/exports/${entry.name}`);
      }
      assertEquals(files, [done.path]);
      const busy = await admin`select count(*)::int as n from pg_stat_activity
        where application_name = ${app}
          and (state <> 'idle' or xact_start is not null)`;
      assertEquals(busy[0]!.n, 0);
    } finally {
      await admin.end();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a readWrite token's LANGUAGE sql function is created, and its body is vetted where it is called: a file or pg_authid behind it is refused",
  ...needs("postgres"),
  async fn() {
    // The fix of the plpgsql findings above refuses CREATE FUNCTION in any
    // language but SQL; an SQL body is read where it is called (pg_vet.ts),
    // so wrapping a refused call in one hides nothing.
    const schema = `a53_s_${crypto.randomUUID().slice(0, 8)}`;
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    const { server, run } = await writeServer("SqlBody");
    try {
      await run(`create schema ${schema}`);
      for (
        const [name, body] of [
          ["file", "select pg_read_file('PG_VERSION')"],
          ["verifiers", "select string_agg(rolpassword, ',') from pg_authid"],
          [
            "xml",
            "select table_to_xml('pg_authid', true, false, '')::text",
          ],
        ]
      ) {
        const created = await run(
          `create function ${schema}.${name}() returns text language sql as $b$ ${body} $b$`,
        );
        assert(created.json.result?.isError !== true, created.text);
        const called = await run(`select ${schema}.${name}() as x`);
        assertEquals(called.json.result?.isError, true, called.text);
        assert(!called.text.includes("SCRAM-SHA-256"), called.text);
      }
      const plpgsql = await run(
        `create procedure ${schema}.p() language plpgsql as $$ begin perform 1; end $$`,
      );
      assertEquals(plpgsql.json.result?.isError, true, plpgsql.text);
      assert(plpgsql.text.includes("LANGUAGE plpgsql"), plpgsql.text);
    } finally {
      await server[Symbol.asyncDispose]();
      await admin.unsafe(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  },
});
