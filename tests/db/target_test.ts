/**
 * target.ts read exactly (issue 34's mutation scores): what a connection URL
 * shows and what it keeps secret, each pinned by a URL and its outcome. Its
 * output feeds redaction: a secret left out is a secret shown.
 */
import { assertEquals } from "@std/assert";
import {
  describeTarget,
  hostList,
  isSecretParam,
  queryStringPaths,
  queryStringSecrets,
  sqlitePath,
  urlEscapeProblem,
  urlParts,
  urlPasswords,
  urlProblem,
  urlWithoutSecrets,
} from "../../lib/db/target.ts";

Deno.test("describeTarget() of a SQLite file keeps its path, its URL and the password secret, shows nothing", () => {
  assertEquals(describeTarget("sqlite", "file:/tmp/shop.db?mode=ro", "pw"), {
    host: null,
    port: null,
    database: "shop.db",
    secrets: ["/tmp/shop.db", "file:/tmp/shop.db?mode=ro", "pw"],
    visible: [],
  });
  assertEquals(describeTarget("sqlite", "/tmp/shop.db")?.secrets, [
    "/tmp/shop.db",
    "/tmp/shop.db",
  ]);
});

Deno.test("describeTarget() of one host: the engine's port unless one is written; shows host:port, host, port, database; keeps user, password, query secrets and key paths", () => {
  assertEquals(
    describeTarget(
      "postgres",
      "postgres://me:pw@h.example:6000/shop?sslkey=/home/me/k.pem&sslpassword=kp",
    ),
    {
      host: "h.example",
      port: 6000,
      database: "shop",
      secrets: ["me", "pw", "kp", "/home/me/k.pem"],
      visible: ["h.example:6000", "h.example", "6000", "shop"],
    },
  );
  const plain = describeTarget("mysql", "mysql://h.example/shop")!;
  assertEquals([plain.port, plain.secrets], [3306, []]);
  assertEquals(plain.visible, ["h.example:3306", "h.example", "3306", "shop"]);
  // No user, a password given apart.
  assertEquals(
    describeTarget("postgres", "postgres://h/db", "given")?.secrets,
    ["given"],
  );
});

Deno.test("describeTarget() of several hosts shows each host:port and each host", () => {
  assertEquals(
    describeTarget("postgres", "postgres://me@h1:5432,h2:5433/shop")?.visible,
    ["h1:5432,h2:5433", "h1:5432", "h1", "h2:5433", "h2", "shop"],
  );
  assertEquals(
    describeTarget("postgres", "postgres://me@h1,h2/shop")?.visible,
    [
      "h1,h2:5432",
      "h1,h2",
      "5432",
      "h1:5432",
      "h1",
      "h2:5432",
      "h2",
      "shop",
    ],
  );
});

Deno.test("isSecretParam() names authToken and sslpassword (decoded), not sslmode", () => {
  assertEquals(isSecretParam("sslpassword"), true);
  assertEquals(isSecretParam("ssl%70assword"), true);
  assertEquals(isSecretParam("authToken"), true);
  assertEquals(isSecretParam("sslmode"), false);
});

Deno.test("queryStringSecrets() reads only after a '?', up to a '#', and drops empty values", () => {
  assertEquals(queryStringSecrets("authToken=tok"), []);
  assertEquals(queryStringSecrets("libsql://h?authToken=tok#authToken=x"), [
    "tok",
  ]);
  assertEquals(queryStringSecrets("libsql://h?authToken=&sslpassword=a%20b"), [
    "a%20b",
    "a b",
  ]);
  assertEquals(
    queryStringPaths(
      "postgres://h/db?sslcert=/c.pem&sslkey=/k.pem&sslrootcert=system",
    ),
    ["/c.pem", "/k.pem"],
  );
});

Deno.test("sqlitePath() is null for a remote libSQL URL, the path for a file", () => {
  assertEquals(sqlitePath("libsql://db.example"), null);
  assertEquals(sqlitePath("https://db.example"), null);
  assertEquals(sqlitePath("/tmp/a.db"), "/tmp/a.db");
  assertEquals(sqlitePath("file:///tmp/a.db"), "/tmp/a.db");
});

Deno.test("urlParts() splits scheme, user info (before the last @; '' when empty, null when absent), hosts and the rest", () => {
  assertEquals(urlParts("postgres://u:p@q@h1,h2:5/db?x#y"), {
    scheme: "postgres://",
    userinfo: "u:p@q",
    hosts: "h1,h2:5",
    rest: "/db?x#y",
  });
  assertEquals(urlParts("postgres://@h/db"), {
    scheme: "postgres://",
    userinfo: "",
    hosts: "h",
    rest: "/db",
  });
  assertEquals(urlParts("postgres://h/db"), {
    scheme: "postgres://",
    userinfo: null,
    hosts: "h",
    rest: "/db",
  });
  assertEquals(urlParts("h/db"), null);
});

Deno.test("hostList() reads an empty port as the default one; 65535 is a port, 65536 none", () => {
  assertEquals(
    hostList("postgres://u@h1:,h2/db", 5432)?.hosts,
    [
      { host: "h1", written: "h1", port: 5432 },
      { host: "h2", written: "h2", port: 5432 },
    ],
  );
  assertEquals(
    hostList("postgres://u@h1:65535,h2/db", 5432)?.hosts[0]?.port,
    65535,
  );
  assertEquals(hostList("postgres://u@h1:65536,h2/db", 5432), null);
});

Deno.test("urlPasswords() and urlWithoutSecrets() read a password after an empty user name (':pw@')", () => {
  assertEquals(urlPasswords("postgres://:pw@h/db"), ["pw"]);
  assertEquals(urlPasswords("postgres://me@h/db"), []);
  assertEquals(
    urlWithoutSecrets("postgres://:pw@h/db"),
    "postgres://:[redacted]@h/db",
  );
  assertEquals(
    urlWithoutSecrets("postgres://me@h/db?authToken=t"),
    "postgres://me@h/db?authToken=[redacted]",
  );
});

Deno.test("urlProblem() takes a Windows drive path for SQLite, refuses another scheme or a URL without //", () => {
  assertEquals(urlProblem("sqlite", "C:\\data\\shop.db"), null);
  assertEquals(urlProblem("sqlite", "file:/tmp/shop.db"), null);
  assertEquals(urlProblem("sqlite", "libsql://db.example"), null);
  assertEquals(
    urlProblem("sqlite", "ftp://db.example/x.db"),
    "must be a file path, a file: URL or a libsql:// URL",
  );
  assertEquals(urlProblem("postgres", "postgres://h/db"), null);
  assertEquals(
    urlProblem("postgres", "mysql://h/db"),
    "must be a postgres:// URL",
  );
  assertEquals(
    urlProblem("postgres", "postgres:h/db"),
    "must be a postgres:// URL",
  );
  assertEquals(urlProblem("postgres", "h/db"), "must be a postgres:// URL");
});

Deno.test("urlEscapeProblem() names the part whose escapes are wrong: user name, password, host, database name; null for a URL without user info", () => {
  const problem = (part: string) =>
    `has a ${part} holding a '%' not followed by two hex digits (write a '%' itself as %25)`;
  assertEquals(urlEscapeProblem("postgres://h/db"), null);
  assertEquals(urlEscapeProblem("postgres://u:p%41@h%41/d%41"), null);
  assertEquals(urlEscapeProblem("postgres://u%zz@h/db"), problem("user name"));
  assertEquals(urlEscapeProblem("postgres://u:p%zz@h/db"), problem("password"));
  assertEquals(urlEscapeProblem("postgres://u@h%zz/db"), problem("host"));
  assertEquals(
    urlEscapeProblem("postgres://u@h/d%zzb"),
    problem("database name"),
  );
  assertEquals(
    urlEscapeProblem("postgres://u@h/d%C3b"),
    "has a database name holding percent-escapes that spell no UTF-8 text (write a '%' itself as %25)",
  );
});

Deno.test("queryStringSecrets() and queryStringPaths() read a query at the text's start, skip a part without '=', keep a CA's path", () => {
  assertEquals(queryStringSecrets("?authToken=tok"), ["tok"]);
  assertEquals(queryStringSecrets("libsql://h?authTokenX&sslpassword1"), []);
  assertEquals(
    queryStringPaths("postgres://h/db?sslrootcert=/etc/ca.pem"),
    ["/etc/ca.pem"],
  );
});

Deno.test("urlEscapeProblem() splits user info at its first ':': an empty user name's password, a user name before a password", () => {
  const problem = (part: string) =>
    `has a ${part} holding a '%' not followed by two hex digits (write a '%' itself as %25)`;
  assertEquals(urlEscapeProblem("postgres://:p%zz@h/db"), problem("password"));
  assertEquals(
    urlEscapeProblem("postgres://u%zz:p@h/db"),
    problem("user name"),
  );
  assertEquals(
    urlEscapeProblem("postgres://u:p:%zz@h/db"),
    problem("password"),
  );
});

Deno.test("describeTarget() shows an IPv6 host without its brackets", () => {
  const target = describeTarget("postgres", "postgres://u@[::1]:6000/db")!;
  assertEquals([target.host, target.port], ["::1", 6000]);
  assertEquals(target.visible, ["::1:6000", "::1", "6000", "db"]);
});

Deno.test("urlEscapeProblem() reads a user name whole: a '%' at its end or at its start", () => {
  const problem =
    "has a user name holding a '%' not followed by two hex digits (write a '%' itself as %25)";
  assertEquals(urlEscapeProblem("postgres://u%@h/db"), problem);
  assertEquals(urlEscapeProblem("postgres://%zz:p@h/db"), problem);
});

Deno.test("urlProblem() reads query parameters on a PostgreSQL URL only: an unknown one is named there, a MariaDB URL's are its driver's", () => {
  assertEquals(
    urlProblem("postgres", "postgres://h/db?notaparam=1")?.startsWith(
      'has the query parameter "notaparam", which dbport does not take',
    ),
    true,
  );
  assertEquals(urlProblem("mysql", "mysql://h/db?notaparam=1"), null);
});
