/**
 * PostgreSQL TLS client certificates (lib/db/postgres/pg_tls.ts): libpq's
 * `sslcert`, `sslkey` and `sslpassword` (an encrypted key's passphrase),
 * read by dbport's own TLS and presented to a server that asks for a
 * certificate (pg_hba `cert`, `clientcert=verify-full`); never passed to
 * the server as startup parameters. The server here is the shared one behind
 * a TLS proxy (tests/_tls_pg_proxy.ts `clientCerts`) that requires a
 * certificate the test client CA signed (tests/fixtures/tls/README.md).
 */

import { assert, assertEquals, assertMatch, assertRejects } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { openDriver } from "../../lib/db/open_driver.ts";
import { openPostgres } from "../../lib/db/postgres/postgres.ts";
import {
  clientCertRefusal,
  tlsPlan,
  withoutOwnTlsParams,
} from "../../lib/db/postgres/pg_tls_plan.ts";
import { redact, withVisible } from "../../lib/db/redact.ts";
import {
  describeTarget,
  queryStringPaths,
  queryStringSecrets,
} from "../../lib/db/target.ts";
import type { Driver } from "../../lib/db/types.ts";
import { needs, openFixture, READ_OPTIONS, runningCount } from "../_db.ts";
import { waitUntil } from "../_wait.ts";
import {
  TEST_CA_FILE,
  TEST_CLIENT,
  TEST_KEY_PASSPHRASE,
  tlsPgProxy,
} from "../_tls_pg_proxy.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `url` with `params` set, and an application_name of this test's own. */
function withParams(url: string, params: Record<string, string>): string {
  const out = new URL(url);
  out.searchParams.set(
    "application_name",
    `tls_cc_${crypto.randomUUID().slice(0, 8)}`,
  );
  for (const [key, value] of Object.entries(params)) {
    out.searchParams.set(key, value);
  }
  return out.toString();
}

/** `driver`'s answer to `text`, or its failure's kind and message. */
function answer(driver: Driver, text: string): Promise<string> {
  return driver.query(text, READ_OPTIONS).then(
    (result) => `answered ${JSON.stringify(result.rows)}`,
    (error) =>
      error instanceof DbError
        ? `${error.kind}: ${error.message}`
        : `failed: ${error}`,
  );
}

/**
 * What a driver on `url` answers to `select 1`, closed after: its failure
 * (or the refusal thrown as it opens) with the time it took.
 */
async function firstAnswer(
  url: string,
): Promise<{ said: string; ms: number }> {
  const started = performance.now();
  let said: string;
  try {
    const driver = openPostgres({ url, secrets: [], wiredReads: true });
    try {
      said = await answer(driver, "select 1 as one");
    } finally {
      // postgres.js's one more attempt for a failed reserve() (a timer of
      // 5-10 ms) ends before the driver closes.
      if (!said!.startsWith("answered")) await sleep(50);
      await driver.close();
    }
  } catch (error) {
    said = error instanceof DbError
      ? `refused ${error.kind}: ${error.message}`
      : `threw: ${error}`;
  }
  return { said, ms: performance.now() - started };
}

const GOOD = {
  sslmode: "verify-full",
  sslrootcert: TEST_CA_FILE,
  sslcert: TEST_CLIENT.cert,
  sslkey: TEST_CLIENT.key,
};

Deno.test("postgres tls client certificate: sslcert, sslkey and sslpassword are dbport's to read; half a pair, TLS off or TLS that postgres.js negotiates are refused by name", () => {
  const base = "postgres://u@db.example:5432/d";
  const cc = "sslcert=%2Fc.pem&sslkey=%2Fc.key";
  const plan = (query: string, ssl: unknown, host = ["db.example"]) =>
    tlsPlan(`${base}?${query}`, { ssl, host });
  assertEquals(plan(`sslmode=verify-full&${cc}&sslpassword=p`, "verify-full"), {
    mode: "verify-full",
    verify: true,
    fallback: false,
    direct: false,
    host: "db.example",
    client: { certFile: "/c.pem", keyFile: "/c.key", password: "p" },
  });
  // A certificate named without an sslmode asks for TLS (never clear text):
  // require, the server checked only with a CA named.
  assertEquals(
    [plan(cc, false)?.mode, plan(cc, false)?.verify],
    ["require", false],
  );
  assertEquals(plan(`${cc}&sslrootcert=%2Fca.pem`, false)?.mode, "verify-full");
  // An explicit sslmode=disable is the owner's word for tlsPlan (refused
  // below, with the certificate).
  assertEquals(plan(`sslmode=disable&${cc}`, false), null);
  // Half a pair names no certificate to present.
  assertEquals(
    plan("sslmode=require&sslcert=%2Fc.pem", "require")?.client,
    undefined,
  );

  const refusal = (query: string, own = true) =>
    clientCertRefusal(`${base}?${query}`, own)?.message ?? null;
  assertEquals(refusal("sslmode=require"), null);
  assertEquals(refusal(`sslmode=require&${cc}`), null);
  assertEquals(
    refusal("sslmode=require&sslcert=%2Fc.pem"),
    "the URL names a client certificate (sslcert) but no key: name the certificate's PEM private key with sslkey too",
  );
  assertEquals(
    refusal("sslmode=require&sslkey=%2Fc.key"),
    "the URL names a client key (sslkey) but no certificate: name the key's PEM certificate with sslcert too",
  );
  assertMatch(
    refusal("sslmode=require&sslpassword=p")!,
    /^the URL names sslpassword but no sslkey/,
  );
  assertMatch(
    refusal(`sslmode=disable&${cc}`)!,
    /turns TLS off \(sslmode=disable\): a certificate is presented only under TLS/,
  );
  assertMatch(
    refusal(`sslmode=require&${cc}`, false)!,
    /^a client certificate \(sslcert, sslkey\) is presented only on TLS dbport negotiates itself, .*not several hosts, not a Unix socket/,
  );
  // None of them names the passphrase.
  for (
    const query of [`${cc}&sslpassword=hush-hush`, "sslpassword=hush-hush"]
  ) {
    for (const own of [true, false]) {
      assert(!(refusal(query, own) ?? "").includes("hush-hush"), query);
    }
  }
  // postgres.js never gets them (it would send them as startup parameters,
  // the passphrase to the server).
  assertEquals(
    withoutOwnTlsParams(
      `${base}?sslmode=verify-full&sslrootcert=%2Fca&${cc}&sslpassword=p&application_name=a`,
    ),
    `${base}?sslmode=verify-full&application_name=a`,
  );
});

Deno.test("postgres tls client certificate: each refusal reaches a client readable — redaction masks the values, never the parameters' names it quotes", () => {
  // `?sslpassword=x` without sslkey was shown as "… but no
  // sslkey=[redacted] is the passphrase …": redact.ts read "sslkey: …" in
  // the refusal's own prose as a secret parameter given a value.
  const base = "postgres://u:pw@db.example:5432/d";
  const cc = "sslcert=%2Fc.pem&sslkey=%2Fc.key";
  for (
    const [query, own] of [
      ["sslmode=require&sslpassword=x", true],
      ["sslpassword=x", true],
      ["sslpassword=hush-hush", false],
      ["sslmode=require&sslcert=%2Fc.pem", true],
      ["sslmode=require&sslkey=%2Fc.key", true],
      [`sslmode=disable&${cc}`, true],
      [`sslmode=require&${cc}`, false],
    ] as const
  ) {
    const url = `${base}?${query}`;
    const message = clientCertRefusal(url, own)!.message;
    const target = describeTarget("postgres", url)!;
    const shown = redact(
      message,
      withVisible([...target.secrets], target.visible),
    );
    assertEquals(shown, message, query);
    assert(!shown.includes("[redacted]"), shown);
  }
  assertEquals(
    clientCertRefusal(`${base}?sslpassword=x`, true)!.message,
    "the URL names sslpassword but no sslkey; sslpassword is the passphrase of the client key that sslkey names (with its certificate, sslcert): name both, or remove sslpassword",
  );
});

Deno.test("postgres tls client certificate: sslpassword is among a connection's secrets, in every form, and redacted from messages", () => {
  const pass = "k3y pass+word/9";
  const encoded = encodeURIComponent(pass);
  const url =
    `postgres://u:pw@db.example:5432/d?sslmode=require&sslcert=/c.pem&sslkey=/c.key&sslpassword=${encoded}`;
  const target = describeTarget("postgres", url)!;
  assert(target.secrets.includes(pass), JSON.stringify(target.secrets));
  // A URL of several hosts with a port each is no WHATWG URL: it is read
  // apart (target.ts `hostList`), its passphrase a secret all the same, and
  // read from the query string alone too.
  const several = `postgres://u@h1:5432,h2:5432/d?sslpassword=${encoded}`;
  assert(describeTarget("postgres", several)!.secrets.includes(pass));
  assert(queryStringSecrets(several).includes(pass));
  // `+` in a query string is a space to URLSearchParams (what the driver
  // reads): both spellings are secrets.
  assertEquals(
    queryStringSecrets("postgres://h/d?sslpassword=a+b&x=1").sort(),
    ["a b", "a+b"],
  );
  const secrets = withVisible([...target.secrets], target.visible);
  for (
    const message of [
      `column "${pass}" does not exist`,
      `could not decrypt with ${encoded}`,
      `connect failed (sslpassword=${pass.split(" ")[0]})`,
    ]
  ) {
    const shown = redact(message, secrets);
    assert(!shown.includes(pass), shown);
    assert(!shown.includes(encoded), shown);
    assert(!shown.includes("k3y"), shown);
    assert(shown.includes("[redacted]"), shown);
  }
});

Deno.test("postgres tls client certificate: the sslcert, sslkey and sslrootcert paths are redacted from a client's messages, not from the owner's", () => {
  const cert = "/work/srv-keys/my certs/client.pem";
  const key = "/usr/local/keys/client.key";
  const ca = "/opt/x/ca.pem";
  const url = `postgres://u@db.example:5432/d?sslmode=verify-full&sslcert=${
    encodeURIComponent(cert)
  }&%73slkey=${key}&sslrootcert=${ca}`;
  assertEquals(
    queryStringPaths(url).filter((p) => !p.includes("%")).sort(),
    [
      cert,
      ca,
      key,
    ].sort(),
  );
  assertEquals(queryStringPaths("postgres://h/d?sslrootcert=system"), []);
  const target = describeTarget("postgres", url)!;
  const secrets = withVisible([...target.secrets], target.visible);
  const message =
    `the client key the URL's sslkey names (${key}) is not the key of the certificate sslcert names (${cert}); CA ${ca}`;
  assertEquals(
    redact(message, secrets),
    "the client key the URL's sslkey names ([redacted]) is not the key of the certificate sslcert names ([redacted]); CA [redacted]",
  );
  // The owner's `connections test` keeps them: outsider_stop53_test.ts.
});

Deno.test({
  name:
    "postgres tls client certificate: the right certificate answers select 1 — its key in clear or encrypted with its sslpassword, with or without an sslmode — on reads and on dbport's own statements",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url), { clientCerts: true });
    const cases: Record<string, Record<string, string>> = {
      "verify-full, key in clear": GOOD,
      "verify-full, encrypted key and its sslpassword": {
        ...GOOD,
        sslkey: TEST_CLIENT.encryptedKey,
        sslpassword: TEST_KEY_PASSPHRASE,
      },
      "verify-full, traditional encrypted key and its sslpassword": {
        ...GOOD,
        sslkey: TEST_CLIENT.traditionalKey,
        sslpassword: TEST_KEY_PASSPHRASE,
      },
      "no sslmode (TLS all the same)": {
        sslcert: TEST_CLIENT.cert,
        sslkey: TEST_CLIENT.key,
      },
    };
    const seen: Record<string, string> = {};
    try {
      for (const [name, params] of Object.entries(cases)) {
        const before = { ...proxy.stats };
        const driver = openPostgres({
          url: withParams(proxy.url, params),
          secrets: [],
          wiredReads: true,
        });
        try {
          const read = await answer(driver, "select 1 as one");
          const version = await driver.version(READ_OPTIONS);
          seen[name] = `${read}; ${version.replace(/ .*/s, "")}`;
          // Every session went through TLS with the certificate: the read's
          // and the own pool's.
          assert(proxy.stats.clientCerts - before.clientCerts >= 2, name);
          assertEquals(
            proxy.stats.tls - before.tls,
            proxy.stats.clientCerts - before.clientCerts,
          );
        } finally {
          await driver.close();
        }
      }
      assertEquals(seen, {
        "verify-full, key in clear": "answered [[1]]; PostgreSQL",
        "verify-full, encrypted key and its sslpassword":
          "answered [[1]]; PostgreSQL",
        "verify-full, traditional encrypted key and its sslpassword":
          "answered [[1]]; PostgreSQL",
        "no sslmode (TLS all the same)": "answered [[1]]; PostgreSQL",
      });
      assertEquals(proxy.stats.clear, 0);
      assertEquals(proxy.stats.noClientCert, 0);
      assertEquals(proxy.stats.untrustedClientCert, 0);
    } finally {
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "postgres tls client certificate: each refusal is a connect error that says why — no certificate, an untrusted one, a wrong or missing sslpassword, a missing or wrong file — at once, never the passphrase",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    // As PostgreSQL refuses (FATAL 28000 without a certificate), and in the
    // TLS handshake (node:tls: an alert without one, a hang-up for an
    // untrusted one — a server that closes the session unanswered).
    const asPostgres = await tlsPgProxy(new URL(fixture.url), {
      clientCerts: true,
    });
    const inHandshake = await tlsPgProxy(new URL(fixture.url), {
      clientCerts: "handshake",
    });
    const wrongPass = "not-the-passphrase-42";
    const missing = `/nonexistent-${crypto.randomUUID()}/client.pem`;
    const cases: [string, string, Record<string, string>][] = [
      ["no certificate", asPostgres.url, { sslmode: "require" }],
      ["no certificate, refused in the handshake", inHandshake.url, {
        sslmode: "require",
      }],
      ["a certificate of another CA", asPostgres.url, {
        ...GOOD,
        sslcert: TEST_CLIENT.strangerCert,
        sslkey: TEST_CLIENT.strangerKey,
      }],
      [
        "a certificate of another CA, refused in the handshake",
        inHandshake
          .url,
        {
          ...GOOD,
          sslcert: TEST_CLIENT.strangerCert,
          sslkey: TEST_CLIENT.strangerKey,
        },
      ],
      ["a wrong sslpassword", asPostgres.url, {
        ...GOOD,
        sslkey: TEST_CLIENT.encryptedKey,
        sslpassword: wrongPass,
      }],
      ["an encrypted key without sslpassword", asPostgres.url, {
        ...GOOD,
        sslkey: TEST_CLIENT.encryptedKey,
      }],
      ["a missing certificate file", asPostgres.url, {
        ...GOOD,
        sslcert: missing,
      }],
      ["a key of another certificate", asPostgres.url, {
        ...GOOD,
        sslkey: TEST_CLIENT.strangerKey,
      }],
      ["a key file that holds a certificate", asPostgres.url, {
        ...GOOD,
        sslkey: TEST_CLIENT.cert,
      }],
    ];
    const seen: Record<string, string> = {};
    try {
      for (const [name, url, params] of cases) {
        const { said, ms } = await firstAnswer(withParams(url, params));
        assert(ms < 5_000, `${name}: answered after ${Math.round(ms)} ms`);
        assert(!said.includes(wrongPass), said);
        seen[name] = said.replaceAll(
          new URL("../fixtures/tls/", import.meta.url).pathname,
          "<fixtures>/",
        );
      }
      // Where the checkout sits under a folder redaction masks (CI clones
      // into /tmp), a message names the files as [redacted].
      const masked = Object.values(seen).some((said) =>
        said.includes("[redacted]")
      );
      const named = (expected: Record<string, string>) =>
        Object.fromEntries(
          Object.entries(expected).map(([name, said]) => [
            name,
            masked ? said.replace(/<fixtures>\/[\w.-]+/g, "[redacted]") : said,
          ]),
        );
      assertEquals(
        seen,
        named({
          "no certificate":
            "connect: connection requires a valid client certificate [SQLSTATE 28000]",
          "no certificate, refused in the handshake":
            "connect: the server asks for a client certificate, and the URL names none (sslcert, sslkey) (TLS alert: CertificateRequired)",
          "a certificate of another CA":
            "connect: the server closed the TLS session before answering the startup; a server that requires a client certificate does so when it refuses the one given: check that a CA the server trusts (its ssl_ca_file) signed the certificate the URL's sslcert names (<fixtures>/stranger.pem)",
          "a certificate of another CA, refused in the handshake":
            "connect: the server closed the TLS session before answering the startup; a server that requires a client certificate does so when it refuses the one given: check that a CA the server trusts (its ssl_ca_file) signed the certificate the URL's sslcert names (<fixtures>/stranger.pem)",
          "a wrong sslpassword":
            "connect: the URL's sslpassword does not decrypt the client key sslkey names (<fixtures>/client-encrypted.key): a wrong passphrase",
          "an encrypted key without sslpassword":
            "connect: the client key the URL's sslkey names (<fixtures>/client-encrypted.key) is encrypted: give its passphrase with sslpassword",
          "a missing certificate file":
            `connect: the client certificate file the URL's sslcert names (${missing}) could not be read: no such file`,
          "a key of another certificate":
            "connect: the client key the URL's sslkey names (<fixtures>/stranger.key) is not the key of the certificate sslcert names (<fixtures>/client.pem)",
          "a key file that holds a certificate":
            "connect: the file the URL's sslkey names (<fixtures>/client.pem) holds no PEM private key",
        }),
      );
      // The files are read before any connection: those refused by the
      // proxy are the four that reached it.
      assertEquals(asPostgres.stats.clientCerts, 0);
      assert(asPostgres.stats.noClientCert >= 1);
      assert(asPostgres.stats.untrustedClientCert >= 1);
      // Refused once each (and postgres.js's one more attempt): never the
      // loop of reconnections a session closed at its startup made.
      assert(
        asPostgres.stats.tls <= 6 && inHandshake.stats.tls <= 6,
        JSON.stringify([asPostgres.stats.tls, inHandshake.stats.tls]),
      );
    } finally {
      await asPostgres.close();
      await inHandshake.close();
    }
  },
});

Deno.test({
  name:
    "postgres tls client certificate: a URL whose TLS postgres.js would negotiate (several hosts, a Unix socket), or with TLS off, is refused before it connects",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url), { clientCerts: true });
    const at = new URL(proxy.url).host;
    const cc =
      `sslcert=${TEST_CLIENT.cert}&sslkey=${TEST_CLIENT.encryptedKey}` +
      `&sslpassword=${TEST_KEY_PASSPHRASE}`;
    const cases: Record<string, string> = {
      "several hosts":
        `postgres://postgres@${at},${at}/test?sslmode=require&${cc}`,
      // No host in the URL: postgres.js takes PGHOST's (set below), a
      // directory, as a Unix socket's.
      "a Unix socket": `postgres:///test?sslmode=require&${cc}`,
      "sslmode=disable": `postgres://postgres@${at}/test?sslmode=disable&${cc}`,
      "sslcert alone":
        `postgres://postgres@${at}/test?sslmode=require&sslcert=${TEST_CLIENT.cert}`,
    };
    const seen: Record<string, string> = {};
    const pgHost = Deno.env.get("PGHOST");
    try {
      for (const [name, url] of Object.entries(cases)) {
        Deno.env.set("PGHOST", `/nonexistent-${crypto.randomUUID()}`);
        const { said } = await firstAnswer(url).finally(() =>
          pgHost === undefined
            ? Deno.env.delete("PGHOST")
            : Deno.env.set("PGHOST", pgHost)
        );
        assert(!said.includes(TEST_KEY_PASSPHRASE), said);
        seen[name] = said;
      }
      const single =
        "refused connect: a client certificate (sslcert, sslkey) is presented only on TLS dbport negotiates itself, which it does on a single host by TCP (not several hosts, not a Unix socket); name one host";
      assertEquals(seen, {
        "several hosts": single,
        "a Unix socket": single,
        "sslmode=disable":
          "refused connect: the URL names a client certificate (sslcert, sslkey) and turns TLS off (sslmode=disable): a certificate is presented only under TLS; remove one or the other",
        "sslcert alone":
          "refused connect: the URL names a client certificate (sslcert) but no key: name the certificate's PEM private key with sslkey too",
      });
      assertEquals(proxy.stats.tls + proxy.stats.clear, 0, "nothing connected");
    } finally {
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "postgres tls client certificate: a read's timeout and its caller's cancel stop the statement on the server, by a cancel request over client-certificate TLS",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url), { clientCerts: true });
    const driver = openPostgres({
      url: withParams(proxy.url, {
        ...GOOD,
        sslkey: TEST_CLIENT.encryptedKey,
        sslpassword: TEST_KEY_PASSPHRASE,
      }),
      secrets: [],
      wiredReads: true,
    });
    try {
      await driver.query("select 1", READ_OPTIONS);
      const certs = proxy.stats.clientCerts;
      const timedOut = await assertRejects(
        () =>
          driver.query("select pg_sleep(30) /* tls-cc-timeout-marker */", {
            ...READ_OPTIONS,
            timeoutMs: 300,
          }),
        DbError,
      );
      assertEquals(timedOut.kind, "timeout", timedOut.message);
      const controller = new AbortController();
      const cancelled = driver.query(
        "select pg_sleep(30) /* tls-cc-cancel-marker */",
        { ...READ_OPTIONS, signal: controller.signal },
      );
      await sleep(300);
      controller.abort();
      const error = await assertRejects(() => cancelled, DbError);
      assertEquals(error.kind, "cancelled", error.message);
      // Both stopped by a cancel request through the proxy inside TLS, with
      // the certificate (the proxy refuses a connection without one).
      assertEquals(proxy.stats.cancels, 2);
      assert(proxy.stats.clientCerts - certs >= 2);
      assertEquals(proxy.stats.clear, 0);
      assertEquals(proxy.stats.noClientCert, 0);
      await waitUntil(
        "the cancelled statements' end",
        async () =>
          await runningCount(fixture, "tls-cc-timeout-marker") === 0 &&
          await runningCount(fixture, "tls-cc-cancel-marker") === 0,
      );
      assertEquals(await answer(driver, "select 3 as n"), "answered [[3]]");
    } finally {
      await driver.close();
      await proxy.close();
    }
  },
});

Deno.test({
  name:
    "postgres tls client certificate: an error that quotes the sslpassword reaches neither a client nor the owner",
  ...needs("postgres"),
  async fn() {
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url), { clientCerts: true });
    const url = withParams(proxy.url, {
      ...GOOD,
      sslkey: TEST_CLIENT.encryptedKey,
      sslpassword: TEST_KEY_PASSPHRASE,
    });
    try {
      for (const audience of ["clients", "owner"] as const) {
        const driver = openDriver(
          { id: crypto.randomUUID(), engine: "postgres", url },
          audience,
        );
        try {
          // The server quotes the unknown column: the passphrase.
          const said = await answer(
            driver,
            `select "${TEST_KEY_PASSPHRASE}" from (select 1) t`,
          );
          assertMatch(said, /^query: column "\[redacted\]" does not exist/);
          assert(!said.includes(TEST_KEY_PASSPHRASE), said);
        } finally {
          await driver.close();
        }
      }
      assert(proxy.stats.clientCerts >= 1);
    } finally {
      await proxy.close();
    }
  },
});
