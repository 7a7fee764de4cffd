/**
 * The console's policies and forms through its Hono app (app.request), over
 * a real server's stores: key → cookie, Host, Origin, CSRF, body limits,
 * escaping, the live fragments and the history export.
 */

import { assert, assertEquals, assertMatch } from "@std/assert";
import type { DialogRequest } from "../../lib/app/host_dialog.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { loadBudgets } from "../../lib/app/token_budgets.ts";
import { createConsoleApp } from "../../lib/console/app.tsx";
import { ConsoleEvents } from "../../lib/console/events.ts";
import { CONTENT_SECURITY_POLICY } from "../../lib/console/guards.ts";
import { ConsoleKeys } from "../../lib/console/keys.ts";
import { PendingApprovals } from "../../lib/console/pending.ts";
import {
  BRIDGE_TOKEN_NAME,
  CONNECTIONS_FILE,
} from "../../lib/base/identity.ts";
import { editQueries, QUERIES_FILE } from "../../lib/app/queries.ts";
import { savedConnection, serverWith } from "../_connections.ts";
import { waitUntil } from "../_wait.ts";
import { addConnection } from "../_connection_add.ts";

const PORT = 4123;
const BASE = `http://127.0.0.1:${PORT}`;
const HOST = { host: `127.0.0.1:${PORT}` };

async function setup(keys = new ConsoleKeys(), port = PORT) {
  const saved = savedConnection(
    { engine: "sqlite", url: "/tmp/dbport-console-test.db" },
    "Secret Shop",
  );
  const server = await serverWith([saved], { console: false });
  const origin = `http://127.0.0.1:${port}`;
  const host = { host: `127.0.0.1:${port}` };
  const at = `${origin}${keys.prefix}`;
  const pending = new PendingApprovals();
  const shutdown = new AbortController();
  const app = createConsoleApp({
    port: () => port,
    keys,
    pending,
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
  const login = await app.request(`${at}/?key=${keys.key}`, {
    headers: host,
  });
  const cookie = login.headers.get("set-cookie")?.split(";")[0] ?? "";
  const session = keys.session(cookie.split("=")[1], port)!;
  return {
    app,
    keys,
    at,
    saved,
    server,
    pending,
    cookie,
    session,
    get: (path: string, headers: Record<string, string> = {}) =>
      app.request(`${at}${path}`, {
        headers: { ...host, cookie, ...headers },
      }),
    post: (
      path: string,
      form: Record<string, string>,
      headers: Record<string, string> = {},
    ) =>
      app.request(`${at}${path}`, {
        method: "POST",
        headers: {
          ...host,
          cookie,
          origin,
          "content-type": "application/x-www-form-urlencoded",
          ...headers,
        },
        body: new URLSearchParams({ csrf: session.csrf, ...form }).toString(),
      }),
    async [Symbol.asyncDispose]() {
      shutdown.abort();
      await server[Symbol.asyncDispose]();
    },
  };
}

Deno.test("console: the key becomes a session cookie and leaves the address; without it, 403 and no connection named", async () => {
  await using t = await setup();
  const keys = new ConsoleKeys();
  const none = await t.app.request(`${t.at}/connections`, { headers: HOST });
  assertEquals(none.status, 403);
  const text = await none.text();
  assert(!text.includes("Secret Shop"), text);
  assertEquals(
    none.headers.get("content-security-policy"),
    CONTENT_SECURITY_POLICY,
  );
  assertEquals(none.headers.get("cache-control"), "no-store");
  const wrong = await t.app.request(`${t.at}/?key=${keys.key}`, {
    headers: HOST,
  });
  assertEquals(wrong.status, 403);
  const empty = await t.app.request(`${t.at}/history?q=orders&key=`, {
    headers: HOST,
  });
  assertEquals(empty.status, 403, "an empty key is no key");
  const ok = await t.get("/connections");
  assertEquals(ok.status, 200);
  assertMatch(await ok.text(), /Secret Shop/);
});

Deno.test("console: the exchange sets HttpOnly, SameSite=Strict and redirects without the key", async () => {
  await using t = await setup();
  const answer = await t.app.request(
    `${t.at}/history?q=orders&key=${t.keys.key}`,
    { headers: HOST },
  );
  assertEquals(answer.status, 303);
  assertEquals(
    answer.headers.get("location"),
    `${t.keys.prefix}/history?q=orders`,
  );
  const cookie = answer.headers.get("set-cookie") ?? "";
  assertMatch(cookie, new RegExp(`^dbport_console_${PORT}=[0-9a-f]{64}; `));
  assertMatch(cookie, /; HttpOnly/);
  assertMatch(cookie, /; SameSite=Strict/);
  assertMatch(cookie, new RegExp(`; Path=${t.keys.prefix}(;|$)`));
  assert(!cookie.includes(t.keys.key));
  // A session of its own, not the one setup() opened.
  assert(!t.cookie.endsWith(cookie.split(";")[0]!.split("=")[1]!));
});

Deno.test("console: Host must be its own loopback address and port", async () => {
  await using t = await setup();
  for (
    const host of [
      `evil.example:${PORT}`,
      "127.0.0.1",
      `127.0.0.1:${PORT + 1}`,
      `[::1]:${PORT}`,
    ]
  ) {
    const answer = await t.get("/", { host });
    assertEquals(answer.status, 403, host);
    assertMatch(await answer.text(), /forbidden_host/);
  }
  assertEquals((await t.get("/", { host: `localhost:${PORT}` })).status, 200);
});

Deno.test("console: a change needs its own Origin and the session's CSRF token", async () => {
  await using t = await setup();
  const form = {
    externalAccess: "blocked",
    aiPolicy: "alwaysAllow",
    safeMode: "alert",
  };
  const path = `/connections/${t.saved.id}`;
  assertEquals((await t.post(path, form, { origin: "null" })).status, 403);
  assertEquals(
    (await t.post(path, form, { origin: "http://evil.example" })).status,
    403,
  );
  assertEquals(
    (await t.post(path, { ...form, csrf: "0".repeat(64) })).status,
    403,
  );
  assertEquals(
    t.server.server.connections.byId(t.saved.id)?.externalAccess,
    "readOnly",
  );
  // The header is as good as the field (for a script's fetch).
  const viaHeader = await t.post(path, { ...form, csrf: "" }, {
    "x-csrf-token": t.session.csrf,
  });
  assertEquals(viaHeader.status, 303);
  assertEquals(
    t.server.server.connections.byId(t.saved.id)?.externalAccess,
    "blocked",
  );
  const saved = JSON.parse(
    await Deno.readTextFile(inAppDir(t.server.home, CONNECTIONS_FILE)),
  );
  assertEquals(saved.connections[0].externalAccess, "blocked");
  // A value the setting does not have is refused by name.
  const bad = await t.post(path, { ...form, safeMode: "yolo" });
  assertEquals(bad.status, 400);
  assertMatch(await bad.text(), /safeMode must be one of/);
});

Deno.test("console: forms are URL-encoded and at most 64 KiB", async () => {
  await using t = await setup();
  const big = await t.post("/tokens", { name: "x".repeat(70_000) });
  assertEquals(big.status, 413);
  const json = await t.app.request(`${t.at}/tokens`, {
    method: "POST",
    headers: {
      ...HOST,
      cookie: t.cookie,
      origin: BASE,
      "content-type": "application/json",
      "x-csrf-token": t.session.csrf,
    },
    body: JSON.stringify({ name: "n", level: "readOnly" }),
  });
  assertEquals(json.status, 415);
  const level = await t.post("/tokens", { name: "n", level: "root" });
  assertEquals(level.status, 400);
  const connection = await t.post("/tokens", {
    name: "n",
    level: "readOnly",
    expires: "7d",
    connections: crypto.randomUUID(),
  });
  assertEquals(connection.status, 400);
  assertEquals((await t.server.server.tokens.list()).length, 1);
});

Deno.test("console: a token made on the page is shown once, with its plaintext nowhere else", async () => {
  await using t = await setup();
  const made = await t.post("/tokens", {
    name: "ci bot",
    level: "readOnly",
    expires: "7d",
    connections: t.saved.id,
  });
  assertEquals(made.status, 303);
  const page = await (await t.get("/tokens")).text();
  const plaintext = /id="token-plaintext">([^<]+)</.exec(page)?.[1]?.trim();
  assertMatch(plaintext ?? "", /^dbp_/);
  const again = await (await t.get("/tokens")).text();
  assert(!again.includes(plaintext!), "shown only once");
  const token = (await t.server.server.tokens.list()).find((x) =>
    x.name === "ci bot"
  )!;
  assertEquals(token.connections, [t.saved.id]);
  assert(token.expiresAt! - Date.now() < 7 * 86_400_000 + 60_000);
});

Deno.test("console: what a client sent is escaped, never markup", async () => {
  await using t = await setup();
  const hostile: DialogRequest = {
    kind: "write",
    tier: "write",
    connection: { id: t.saved.id, name: "Secret Shop" },
    client: '<img src=x onerror="alert(1)">',
    token: "t",
    statement: "UPDATE t SET v = '</pre><script>alert(1)</script>'",
    safeMode: "alert",
    message: 'Allow a query on "Secret Shop"?',
    reasons: [],
  };
  const waiting = t.pending.dialog.ask(hostile, new AbortController().signal);
  const page = await (await t.get("/")).text();
  assert(!page.includes("<script>alert"), page);
  assert(!page.includes("<img src=x"), page);
  assertMatch(page, /&lt;\/pre&gt;&lt;script&gt;alert\(1\)/);
  // The live part alone, for the page's script.
  const fragment = await (await t.get("/?fragment=1")).text();
  assert(!fragment.includes("<html"), fragment);
  assertMatch(fragment, /data-approval=/);
  const id = t.pending.list()[0]!.id;
  const bad = await t.post(`/approvals/${id}`, { decision: "maybe" });
  assertEquals(bad.status, 400);
  const answer = await t.post(`/approvals/${id}`, { decision: "approve" });
  assertEquals(
    answer.headers.get("location"),
    `${t.keys.prefix}/?notice=approved`,
  );
  assertEquals(await waiting, { answer: "approve" });
  // Hidden characters are shown, as in every other way of asking.
  const sneaky = t.pending.dialog.ask(
    { ...hostile, statement: "SELECT 1 --\rDROP TABLE t" },
    new AbortController().signal,
  );
  assertMatch(await (await t.get("/?fragment=1")).text(), /SELECT 1 --␍DROP/);
  t.pending.answer(t.pending.list()[0]!.id, false);
  assertEquals(await sneaky, { answer: "deny" });
  const late = await t.post(`/approvals/${id}`, { decision: "deny" });
  assertEquals(
    late.headers.get("location"),
    `${t.keys.prefix}/?notice=gone`,
  );
});

Deno.test("console: an approval asked through the stdio bridge names the bridge, not its token's internal name", async () => {
  await using t = await setup();
  const waiting = t.pending.dialog.ask({
    kind: "write",
    tier: "write",
    connection: { id: t.saved.id, name: "Shop" },
    client: "claude-code",
    token: BRIDGE_TOKEN_NAME,
    statement: "UPDATE t SET v = 1",
    safeMode: "alert",
    message: 'Allow a query on "Shop"?',
    reasons: [],
  }, new AbortController().signal);
  const fragment = await (await t.get("/?fragment=1")).text();
  assertMatch(fragment, /<dt>Token<\/dt>\s*<dd>stdio bridge<\/dd>/);
  assert(!fragment.includes(BRIDGE_TOKEN_NAME), fragment);
  t.pending.answer(t.pending.list()[0]!.id, false);
  assertEquals(await waiting, { answer: "deny" });
});

Deno.test("console: the history exports as CSV and JSON lines, filtered like the page", async () => {
  await using t = await setup();
  const base = {
    connectionId: t.saved.id,
    statementType: "read",
    durationMs: 3,
    rowCount: 1,
    rowsAffected: 0,
    outcome: "success" as const,
    error: null,
    clientName: "Claude",
    tokenName: "laptop",
  };
  t.server.server.history.record({ ...base, time: 1, sql: "SELECT 'orders'" });
  t.server.server.history.record({ ...base, time: 2, sql: "=cmd|' /c calc'" });
  const csv = await t.get("/history/export?format=csv&q=orders");
  assertEquals(csv.headers.get("content-type"), "text/csv; charset=utf-8");
  assertMatch(
    csv.headers.get("content-disposition") ?? "",
    /^attachment; filename="dbport-history-\d{4}-\d\d-\d\d\.csv"$/,
  );
  const lines = (await csv.text()).trim().split("\r\n");
  assertEquals(lines.length, 2);
  assertMatch(lines[1]!, /Secret Shop,success,read/);
  const json = await (await t.get("/history/export?format=json")).text();
  const rows = json.trim().split("\r\n").map((line) => JSON.parse(line));
  assertEquals(rows.map((row) => row.sql), [
    "=cmd|' /c calc'",
    "SELECT 'orders'",
  ]);
  assertEquals(rows[0].connectionName, "Secret Shop");
  const all = await (await t.get("/history/export?format=csv")).text();
  assertMatch(all, /'=cmd/, "a formula is disarmed");
  assertEquals((await t.get("/history/export?format=xml")).status, 400);
});

Deno.test("console: nothing outside the per-start prefix answers but a bare 404, cookie or not", async () => {
  await using t = await setup();
  const other = new ConsoleKeys().prefix;
  const upper = t.keys.prefix.toUpperCase().replace("/C/", "/c/");
  for (
    const path of [
      "/",
      "/connections",
      "/tokens",
      "/static/console.js",
      "/events",
      `/?key=${t.keys.key}`,
      `${other}/`,
      `${other}/connections`,
      `${other}/?key=${t.keys.key}`,
      `${t.keys.prefix}x/`,
      `${t.keys.prefix}`,
      `${upper}/`,
      "/c/",
      `/c${t.keys.prefix}/`,
      // Dot segments are resolved before routing: they cannot step in.
      `${other}/..${t.keys.prefix.slice(2)}x/`,
      `${t.keys.prefix}/../connections`,
      `${t.keys.prefix}/%2e%2e/connections`,
      `/x/..${other.slice(2)}/`,
    ]
  ) {
    const answer = await t.app.request(`${BASE}${path}`, {
      headers: { ...HOST, cookie: t.cookie },
    });
    assertEquals(answer.status, 404, path);
    const text = await answer.text();
    assert(!text.includes("Secret Shop"), text);
    assert(!text.includes("dbport"), `a 404 names nothing: ${text}`);
    assert(!text.includes(t.keys.prefix), text);
    assertEquals(answer.headers.get("set-cookie"), null, path);
    assertEquals(answer.headers.get("cache-control"), "no-store");
  }
  // A key shown at the wrong path opened no session.
  assertEquals(
    (await t.app.request(`${BASE}/?key=${t.keys.key}`, { headers: HOST }))
      .status,
    404,
  );
  const posted = await t.app.request(`${BASE}/tokens`, {
    method: "POST",
    headers: {
      ...HOST,
      cookie: t.cookie,
      origin: BASE,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      csrf: t.session.csrf,
      name: "stray",
      level: "fullAccess",
    }).toString(),
  });
  assertEquals(posted.status, 404);
  assertEquals((await t.server.server.tokens.list()).length, 1);
});

Deno.test("console: every link, form, asset and the event stream sit under the prefix", async () => {
  await using t = await setup();
  const made = await t.post("/tokens", {
    name: "n",
    level: "readOnly",
    expires: "7d",
  });
  assertEquals(made.headers.get("location"), `${t.keys.prefix}/tokens`);
  for (
    const path of ["/", "/activity", "/history", "/connections", "/tokens"]
  ) {
    const page = await (await t.get(path)).text();
    const urls = [...page.matchAll(/\b(?:href|src|action)="([^"]*)"/g)].map(
      (m) => m[1]!.replaceAll("&amp;", "&"),
    );
    assert(urls.length >= 7, `${path}: ${urls}`);
    for (const url of urls) {
      assert(url.startsWith(`${t.keys.prefix}/`), `${path}: ${url}`);
    }
    const links = [...page.matchAll(/\b(?:href|src)="([^"]*)"/g)];
    for (const [, url] of links) {
      const answer = await t.get(
        url!.replaceAll("&amp;", "&").slice(t.keys.prefix.length),
      );
      await answer.body?.cancel();
      assertEquals(answer.status, 200, url);
    }
    assertMatch(page, new RegExp(`data-base="${t.keys.prefix}"`));
  }
  const script = await (await t.get("/static/console.js")).text();
  assertMatch(
    script,
    /new EventSource\(document\.body\.dataset\.base \+ "\/events"\)/,
  );
});

Deno.test("console: a session is bound to its listener's port, and a cookie from elsewhere opens nothing", async () => {
  await using t = await setup();
  // The same keys behind another port (a second listener): the cookie that
  // port A issued is refused on B, under B's own cookie name or A's.
  await using b = await setup(t.keys, PORT + 1);
  const hostB = { host: `127.0.0.1:${PORT + 1}` };
  for (
    const cookie of [
      t.cookie,
      t.cookie.replace(
        `dbport_console_${PORT}=`,
        `dbport_console_${PORT + 1}=`,
      ),
    ]
  ) {
    const answer = await b.app.request(
      `http://127.0.0.1:${PORT + 1}${t.keys.prefix}/connections`,
      { headers: { ...hostB, cookie } },
    );
    assertEquals(answer.status, 403, cookie);
    assert(!(await answer.text()).includes("Secret Shop"));
  }
  assertEquals((await b.get("/connections")).status, 200);
  // A second dbport (its own keys): A's cookie and A's prefix mean nothing.
  await using c = await setup();
  const replay = await c.app.request(`${BASE}${c.keys.prefix}/connections`, {
    headers: { ...HOST, cookie: t.cookie },
  });
  assertEquals(replay.status, 403);
  const wrongPrefix = await c.app.request(
    `${BASE}${t.keys.prefix}/connections`,
    { headers: { ...HOST, cookie: t.cookie } },
  );
  assertEquals(wrongPrefix.status, 404);
});

Deno.test("console: Harden is offered only where the engine has logins, and its forms need the session, the CSRF token and a plan of this session", async () => {
  await using t = await setup();
  const page = await (await t.get("/connections")).text();
  assert(!page.includes("Harden"), "SQLite has no logins");
  const path = `/connections/${t.saved.id}/harden`;
  const sqlite = await t.post(path, {});
  assertEquals(sqlite.status, 400);
  assertMatch(await sqlite.text(), /no_logins/);
  assertEquals((await t.post(path, { csrf: "" })).status, 403);
  assertEquals(
    (await t.post(path, {}, { origin: "http://127.0.0.1:1" })).status,
    403,
  );
  assertEquals((await t.get(path)).status, 404, "a GET runs nothing");
  const stray = await t.post(`${path}/apply`, { plan: "0".repeat(64) });
  assertEquals(stray.status, 409);
  assertMatch(await stray.text(), /not waiting/);
  const unknown = await t.post(
    `/connections/${crypto.randomUUID()}/harden`,
    {},
  );
  assertEquals(unknown.status, 404);
});

Deno.test("console: a policy change while ten `connections add` run at once loses none of the eleven", async () => {
  await using t = await setup();
  const home = t.server.home;
  const path = inAppDir(home, CONNECTIONS_FILE);
  const adds = Array.from(
    { length: 10 },
    (_, i) => addConnection(home, `concurrent${i}`),
  );
  // The console's change lands while the CLI processes are editing: once
  // one of them holds the lock.
  await waitUntil(
    "a CLI process to hold connections.json's lock",
    () => Deno.stat(`${path}.lock`).then(() => true, () => false),
    { timeoutMs: 30_000, intervalMs: 2 },
  );
  const changed = await t.post(`/connections/${t.saved.id}`, {
    externalAccess: "blocked",
    aiPolicy: "never",
    safeMode: "readOnly",
  });
  assertEquals(changed.status, 303);
  for (const run of await Promise.all(adds)) {
    assertEquals(run.code, 0, new TextDecoder().decode(run.stderr));
  }
  const saved = JSON.parse(await Deno.readTextFile(path)).connections;
  assertEquals(
    saved.map((c: { name: string }) => c.name).sort(),
    [
      "Secret Shop",
      ...Array.from({ length: 10 }, (_, i) => `concurrent${i}`),
    ].sort(),
  );
  const shop = saved.find((c: { id: string }) => c.id === t.saved.id);
  assertEquals(
    [shop.externalAccess, shop.aiPolicy, shop.safeMode],
    ["blocked", "never", "readOnly"],
  );
  // The running server's store catches up with the file (its watch).
  const store = t.server.server.connections;
  await waitUntil(
    "the server's store to hold the 11 connections",
    () => store.all().length === 11,
    { intervalMs: 50 },
  );
  assertEquals(store.all().length, 11);
  assertEquals(store.byId(t.saved.id)?.aiPolicy, "never");
});

Deno.test("console: a token's budget is set and the token paused and resumed from the Tokens page", async () => {
  await using t = await setup();
  const { id } = await t.server.mint("readOnly", { name: "budgeted" });
  const set = await t.post(`/tokens/${id}/budget`, {
    max_calls_per_minute: "10",
    max_rows_per_hour: "",
    max_writes_per_hour: "5",
  });
  assertEquals(set.status, 303);
  const saved = (await loadBudgets(t.server.server.tokens.db)).get(id);
  assertEquals(saved?.maxCallsPerMinute, 10);
  assertEquals(saved?.maxRowsPerHour, null);
  assertEquals(saved?.maxWritesPerHour, 5);
  const bad = await t.post(`/tokens/${id}/budget`, {
    max_calls_per_minute: "ten",
  });
  assertEquals(bad.status, 400);
  assertEquals((await t.post(`/tokens/${id}/pause`, {})).status, 303);
  const page = await (await t.get("/tokens")).text();
  assertMatch(page, /\/tokens\/[^"]+\/resume/);
  assertMatch(page, /value="10"/);
  assert(
    (await loadBudgets(t.server.server.tokens.db)).get(id)?.pausedAt !== null,
  );
  assertEquals((await t.post(`/tokens/${id}/resume`, {})).status, 303);
  assertEquals(
    (await loadBudgets(t.server.server.tokens.db)).get(id)?.pausedAt,
    null,
  );
  assertEquals((await t.post("/tokens/bridge/pause", {})).status, 303);
  assertEquals((await t.post("/tokens/nope/pause", {})).status, 404);
  assertEquals((await t.post(`/tokens/${id}/pause`, { csrf: "" })).status, 403);
});

Deno.test("console: the Queries page shows queries.json as the server has it, escaped, under the console's own rules", async () => {
  await using t = await setup();
  const empty = await t.get("/queries");
  assertEquals(empty.status, 200);
  const none = await empty.text();
  assertMatch(none, /No saved query/);
  assertMatch(none, new RegExp(`href="${t.keys.prefix}/queries"`));
  await editQueries(inAppDir(t.server.home, QUERIES_FILE), () => [{
    name: "by_region",
    connectionId: t.saved.id,
    sql: "select '<script>alert(1)</script>' as x, :region as r, :n as n",
    params: [{ name: "region", type: "text" }, {
      name: "n",
      type: "int",
      default: 10,
    }],
    description: "Rows <b>by</b> region",
  }]);
  // The file watch replaces the server's store: the next load shows it.
  const html: string = await waitUntil(
    "the page shows the new query",
    async () => {
      const text = await (await t.get("/queries")).text();
      return text.includes("q_by_region") ? text : "";
    },
  );
  assertMatch(html, /<td data-label="Connection">Secret Shop<\/td>/);
  assertMatch(html, /:region text/);
  assertMatch(html, /:n int = 10/);
  assertMatch(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assertMatch(html, /Rows &lt;b&gt;by&lt;\/b&gt; region/);
  assert(!html.includes("<script>alert"), html);
  assert(!html.includes("<b>by"), html);
  // The live part alone, as the script fetches it.
  const fragment = await (await t.get("/queries?fragment=1")).text();
  assert(fragment.includes("q_by_region"), fragment);
  assert(!fragment.includes("<nav"), fragment);

  // Without the session cookie, from another Host: refused, nothing named.
  const anonymous = await t.app.request(`${t.at}/queries`, { headers: HOST });
  assertEquals(anonymous.status, 403);
  assert(!(await anonymous.text()).includes("by_region"));
  const foreign = await t.get("/queries", { host: `evil.example:${PORT}` });
  assertEquals(foreign.status, 403);
  const body = await foreign.text();
  assertMatch(body, /forbidden_host/);
  assert(!body.includes("by_region"), body);
  // The key in the address becomes a cookie and leaves it.
  const keyed = await t.app.request(`${t.at}/queries?key=${t.keys.key}`, {
    headers: HOST,
  });
  assertEquals(keyed.status, 303);
  assertEquals(keyed.headers.get("location"), `${t.keys.prefix}/queries`);

  // Removed from the file: gone from the page.
  await editQueries(inAppDir(t.server.home, QUERIES_FILE), () => []);
  await waitUntil(
    "the page drops the removed query",
    async () =>
      !(await (await t.get("/queries")).text()).includes("q_by_region"),
  );
});

Deno.test("console: Add makes a new SQLite file at an absolute path in an existing directory, never at a relative one", async () => {
  await using t = await setup();
  const dir = await Deno.makeTempDir({ prefix: "dbport-console-new-" });
  try {
    const file = `${dir}/fresh.db`;
    const added = await t.post("/connections/add", {
      name: "Fresh",
      url: file,
    });
    assertEquals(added.status, 200);
    const page = await added.text();
    assertMatch(page, /Created the empty SQLite database/);
    const info = await Deno.stat(file);
    assertEquals(info.size, 0);
    assertEquals(info.mode! & 0o777, 0o600);
    assert(
      t.server.server.connections.all().some((c) => c.name === "Fresh"),
      "saved",
    );
    // Relative to wherever the server runs: not made, not saved.
    const relative = await t.post("/connections/add", {
      name: "Nearby",
      url: "dbport-console-relative-new.db",
    });
    assertMatch(await relative.text(), /Not saved/);
    assertEquals(
      await Deno.stat("dbport-console-relative-new.db").then(
        () => true,
        () => false,
      ),
      false,
    );
    // A directory that does not exist: not made, not saved.
    const nowhere = await t.post("/connections/add", {
      name: "Nowhere",
      url: `${dir}/missing/x.db`,
    });
    assertMatch(await nowhere.text(), /Not saved/);
    assert(
      !t.server.server.connections.all().some((c) =>
        c.name === "Nearby" || c.name === "Nowhere"
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
