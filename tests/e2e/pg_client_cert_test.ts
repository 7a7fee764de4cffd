/**
 * PostgreSQL TLS client certificates through execute_query: a saved URL
 * naming `sslcert`, `sslkey` and `sslpassword` reaches a server that
 * requires a certificate (tests/_tls_pg_proxy.ts `clientCerts`); the
 * refusals are connect errors that say why, never an internal error; the
 * passphrase is in no answer. (A client certificate on a URL of several
 * hosts is refused: tested on the driver,
 * tests/db/pg_tls_client_cert_test.ts.)
 */
import { assert, assertEquals } from "@std/assert";
import { savedConnection, serverWith } from "../_connections.ts";
import { needs, openFixture } from "../_db.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";
import {
  TEST_CA_FILE,
  TEST_CLIENT,
  TEST_KEY_PASSPHRASE,
  tlsPgProxy,
} from "../_tls_pg_proxy.ts";

function withParams(url: string, params: Record<string, string>): string {
  const out = new URL(url);
  for (const [key, value] of Object.entries(params)) {
    out.searchParams.set(key, value);
  }
  return out.toString();
}

Deno.test(
  "postgres tls client certificate: execute_query answers with the right certificate and says why without one, with a wrong sslpassword or half a pair; the passphrase is in no answer",
  needs("postgres"),
  async () => {
    await using fixture = await openFixture("postgres");
    const proxy = await tlsPgProxy(new URL(fixture.url), { clientCerts: true });
    try {
      const cert = {
        sslmode: "verify-full",
        sslrootcert: TEST_CA_FILE,
        sslcert: TEST_CLIENT.cert,
        sslkey: TEST_CLIENT.encryptedKey,
      };
      const connections = {
        good: savedConnection(
          {
            engine: "postgres",
            url: withParams(proxy.url, {
              ...cert,
              sslpassword: TEST_KEY_PASSPHRASE,
            }),
          },
          "Client cert",
          { safeMode: "silent" },
        ),
        none: savedConnection(
          {
            engine: "postgres",
            url: withParams(proxy.url, { sslmode: "require" }),
          },
          "No cert",
          { safeMode: "silent" },
        ),
        wrong: savedConnection(
          {
            engine: "postgres",
            url: withParams(proxy.url, { ...cert, sslpassword: "wr0ng-pass" }),
          },
          "Wrong passphrase",
          { safeMode: "silent" },
        ),
        // Refused as the driver opens (pg_pools.ts): a connect error too.
        half: savedConnection(
          {
            engine: "postgres",
            url: withParams(proxy.url, {
              sslmode: "require",
              sslcert: TEST_CLIENT.cert,
              sslpassword: TEST_KEY_PASSPHRASE,
            }),
          },
          "Certificate without key",
          { safeMode: "silent" },
        ),
      };
      await using server = await serverWith(Object.values(connections));
      const reader = (await server.mint("readOnly")).plaintext;
      const call = (name: string, args: Record<string, string>) =>
        callTool(server, name, args, { authorization: `Bearer ${reader}` });
      const answers: string[] = [];
      const query = async (
        connection: { id: string },
        text: string,
      ) => {
        const answer = await call("execute_query", {
          connection_id: connection.id,
          query: text,
        });
        answers.push(answer.text);
        return answer;
      };

      const good = await query(connections.good, "select 1 as one");
      assert(good.json.result?.isError !== true, good.text);
      assertEquals(good.json.result.structuredContent.row_count, 1);
      assertEquals(good.json.result.structuredContent.rows, [[1]]);
      assert(proxy.stats.clientCerts >= 1);

      // The server quotes an unknown column: the passphrase, redacted.
      const quoted = toolErrorText(
        await query(
          connections.good,
          `select "${TEST_KEY_PASSPHRASE}" from (select 1) t`,
        ),
      );
      assert(quoted.includes('column "[redacted]" does not exist'), quoted);

      const none = toolErrorText(await query(connections.none, "select 1"));
      assert(none.startsWith("not_connected"), none);
      assert(
        none.includes("connection requires a valid client certificate"),
        none,
      );

      const wrong = toolErrorText(await query(connections.wrong, "select 1"));
      assert(wrong.startsWith("not_connected"), wrong);
      assert(
        wrong.includes(
          "the URL's sslpassword does not decrypt the client key sslkey names",
        ),
        wrong,
      );
      assert(!wrong.includes("wr0ng-pass"), wrong);

      const half = toolErrorText(await query(connections.half, "select 1"));
      assert(half.startsWith("not_connected"), half);
      assert(
        half.includes(
          "the URL names a client certificate (sslcert) but no key: name the certificate's PEM private key with sslkey too",
        ),
        half,
      );

      const listed = await call("list_connections", {});
      answers.push(listed.text);
      for (const text of answers) {
        assert(!text.includes(TEST_KEY_PASSPHRASE), text);
        assert(!text.includes("Internal error"), text);
      }
    } finally {
      await proxy.close();
    }
  },
);
