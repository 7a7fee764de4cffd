import { assert, assertEquals } from "@std/assert";
import { ConnectionStore } from "../../lib/app/connection_store.ts";
import {
  parseConnections,
  saveConnections,
} from "../../lib/app/connections.ts";
import {
  describeTarget,
  lenientDecode,
  sqlitePath,
  urlProblem,
} from "../../lib/db/target.ts";

const ID = "0b6f7c8e-1d2a-4e5f-9a0b-1c2d3e4f5a6b";
const base = {
  id: ID,
  name: "Shop",
  driver: "postgres",
  url: "postgres://u@h/db",
};

function problem(connection: unknown): string {
  const parsed = parseConnections(
    JSON.stringify({ connections: [connection] }),
  );
  assert(!parsed.ok, "expected a refusal");
  return parsed.message;
}

Deno.test("parseConnections() applies the policy defaults", () => {
  const { driver: _old, ...current } = { ...base, engine: "postgres" as const };
  const parsed = parseConnections(JSON.stringify({ connections: [current] }));
  assert(parsed.ok);
  assertEquals(parsed.connections[0], {
    ...current,
    externalAccess: "readOnly",
    aiPolicy: "alwaysAllow",
    safeMode: "alert",
  });
});

Deno.test('parseConnections() reads the engine\'s old field name "driver"', () => {
  const parsed = parseConnections(JSON.stringify({ connections: [base] }));
  assert(parsed.ok);
  assertEquals(parsed.connections[0]?.engine, "postgres");
  assert(!("driver" in parsed.connections[0]!));
  assert(
    problem({ ...base, engine: "postgres" }).includes(
      'connections[0] names its engine twice ("engine" and "driver")',
    ),
  );
  const { driver: _old, ...none } = base;
  assert(problem(none).includes("connections[0].engine is missing"));
});

Deno.test('saveConnections() writes the field as "engine"', async () => {
  const dir = await Deno.makeTempDir();
  try {
    const parsed = parseConnections(JSON.stringify({ connections: [base] }));
    assert(parsed.ok);
    await saveConnections(`${dir}/connections.json`, parsed.connections);
    const text = await Deno.readTextFile(`${dir}/connections.json`);
    assert(text.includes('"engine": "postgres"'), text);
    assert(!text.includes('"driver"'), text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseConnections() names the exact field at fault", () => {
  assert(
    problem({ ...base, id: "nope" }).includes(
      "connections[0].id must be a UUID",
    ),
  );
  assert(
    problem({ ...base, driver: "oracle" }).includes(
      "connections[0].driver must be one of",
    ),
  );
  assert(
    problem({ ...base, url: "mysql://x" }).includes(
      "connections[0].url must be a postgres:// URL",
    ),
  );
  assert(
    problem({ ...base, aiPolicy: "sometimes" }).includes(
      "connections[0].aiPolicy",
    ),
  );
  assert(problem({ ...base, colour: "red" }).includes("connections[0].colour"));
  const { name: _name, ...nameless } = base;
  assert(problem(nameless).includes("connections[0].name is missing"));
  const twice = parseConnections(
    JSON.stringify({ connections: [base, { ...base, name: "Other" }] }),
  );
  assert(!twice.ok && twice.message.includes("connections[1].id"));
});

Deno.test("ConnectionStore keeps what it had when the new file is malformed", () => {
  const lines: string[] = [];
  const store = new ConnectionStore();
  assert(
    store.apply(
      JSON.stringify({ connections: [base] }),
      "c.json",
      (l) => lines.push(l),
    ),
  );
  assertEquals(store.all().length, 1);
  assert(!store.apply("{ not json", "c.json", (l) => lines.push(l)));
  assertEquals(store.byId(ID.toUpperCase())?.name, "Shop");
  assert(lines[0]?.includes("keeping the connections in force"));
  assert(store.apply(null, "c.json", () => {}));
  assertEquals(store.all().length, 0);
});

Deno.test("parseConnections() reads libpq's several hosts with a port each; a URL that cannot be used is quoted without its password, or kept and named (keepUnusable)", () => {
  const perHost = {
    ...base,
    url: "postgres://u:pw-Secret1@h1:5432,h2:5433/db",
  };
  const parsed = parseConnections(JSON.stringify({ connections: [perHost] }));
  assert(parsed.ok);
  assertEquals(parsed.connections[0]?.url, perHost.url);
  const bad = {
    ...base,
    url: "postgres://u:pw-Secret1@h1:x,h2/db?sslpassword=pass-Phrase2",
  };
  const message = problem(bad);
  assert(message.includes("connections[0].url is not a valid URL"), message);
  assert(message.includes('(connection "Shop")'), message);
  assert(!message.includes("pw-Secret1"), message);
  assert(!message.includes("pass-Phrase2"), message);
  const other = { ...base, id: crypto.randomUUID(), name: "Other" };
  const kept = parseConnections(
    JSON.stringify({ connections: [bad, other] }),
    "c.json",
    { keepUnusable: true },
  );
  assert(kept.ok);
  assertEquals(kept.connections.map((c) => c.name), ["Shop", "Other"]);
  assertEquals(kept.unusable, [
    'connections[0].url is not a valid URL (connection "Shop")',
  ]);
  // The server's store keeps them too, and says which cannot be used.
  const lines: string[] = [];
  const store = new ConnectionStore();
  assert(
    store.apply(
      JSON.stringify({ connections: [bad, other] }),
      "c.json",
      (l) => lines.push(l),
    ),
  );
  assertEquals(store.all().length, 2);
  assert(lines[0]?.includes("that connection fails when used"), lines[0]);
  assert(!lines.join("\n").includes("pw-Secret1"));
});

Deno.test("parseConnections() names a URL whose user, password, host or database holds a '%' not followed by two hex digits — never a throw; kept and named with keepUnusable (outsider stop 55)", () => {
  for (
    const [url, part] of [
      ["postgres://postgres:50%off@127.0.0.1:5432/test", "password"],
      ["postgres://u%ZZ@h/db", "user name"],
      ["postgres://u@h/d%ZZb", "database name"],
      ["postgres://u:p%2@h1:5432,h2:5433/db", "password"],
      ["postgres://u@h%zz:5432,h2:5433/db", "host"],
      ["mysql://root:50%off@127.0.0.1/test", "password"],
      ["mariadb://root@127.0.0.1/d%", "database name"],
    ] as const
  ) {
    const engine = url.startsWith("postgres") ? "postgres" : "mysql";
    const bad = { ...base, driver: engine, url };
    const message = problem(bad);
    assert(
      message.includes(
        `connections[0].url has a ${part} holding a '%' not followed by two hex digits (write a '%' itself as %25) (connection "Shop")`,
      ),
      message,
    );
    assert(!message.includes("50%off") && !message.includes("p%2@"), message);
    const other = { ...base, id: crypto.randomUUID(), name: "Other" };
    const kept = parseConnections(
      JSON.stringify({ connections: [bad, other] }),
      "c.json",
      { keepUnusable: true },
    );
    assert(kept.ok);
    assertEquals(kept.connections.map((c) => c.name), ["Shop", "Other"]);
    assertEquals(kept.unusable?.length, 1);
    // What shows a connection reads it without a throw.
    const target = describeTarget(engine, url);
    // (A host list that is no host list cannot be read: null.)
    assert(target !== null || part === "host", url);
    assertEquals(
      urlProblem(engine, url),
      `has a ${part} holding a '%' not followed by two hex digits (write a '%' itself as %25)`,
    );
  }
  // Escapes that spell no UTF-8 text are named so.
  assertEquals(
    urlProblem("postgres", "postgres://u:%C3@h/db"),
    "has a password holding percent-escapes that spell no UTF-8 text (write a '%' itself as %25)",
  );
  // The password decoded where it can be is a secret still.
  const target = describeTarget("postgres", "postgres://u:50%off%21@h/db")!;
  assert(target.secrets.includes("50%off!"), JSON.stringify(target.secrets));
  // SQLite reads a file: URI's bare '%' as itself: the path, no problem.
  assertEquals(sqlitePath("file:/tmp/50%off%20b.db"), "/tmp/50%off b.db");
  assertEquals(urlProblem("sqlite", "file:/tmp/50%off.db"), null);
  assertEquals(lenientDecode("a%20b%zz%C3"), "a b%zz%C3");
});

Deno.test("ConnectionStore says an unusable connection's problem when it appears, not again at every change of the file", () => {
  const bad = { ...base, url: "postgres://u:p@h1:x,h2/db" };
  const other = { ...base, id: crypto.randomUUID(), name: "Other" };
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  // Said at start (stores.ts), so the store is told it was.
  const store = new ConnectionStore([], [
    `connections[0].url is not a valid URL (connection "Shop")`,
  ]);
  store.apply(JSON.stringify({ connections: [bad] }), "c.json", log);
  assertEquals(lines, []);
  // Another connection added: the unusable one is not said again.
  store.apply(JSON.stringify({ connections: [bad, other] }), "c.json", log);
  assertEquals(lines, []);
  // Put right, then broken again: said again, once.
  store.apply(JSON.stringify({ connections: [other] }), "c.json", log);
  store.apply(JSON.stringify({ connections: [bad] }), "c.json", log);
  store.apply(JSON.stringify({ connections: [bad] }), "c.json", log);
  assertEquals(lines.length, 1);
  assert(lines[0]!.includes("fails when used, the others serve"), lines[0]);
});
