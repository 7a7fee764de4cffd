import { assertEquals, assertMatch } from "@std/assert";
import { fixFor, probeConnection } from "../../lib/app/connection_probe.ts";
import {
  CONNECTION_DEFAULTS,
  type SavedConnection,
} from "../../lib/app/connections.ts";
import { DbError } from "../../lib/db/errors.ts";
import { defaultSshContext } from "../../lib/db/open_driver.ts";
import { FakeDriver } from "../_fake_driver.ts";

const CONNECTION: SavedConnection = {
  ...CONNECTION_DEFAULTS,
  id: "0b7c6a0e-9a57-4d55-9b1c-0d4b1f3c2a11",
  name: "shop",
  engine: "postgres",
  url: "postgres://owner@db.example:5432/shop",
};

/** A driver that connects and then cannot read its login's powers. */
class UnknownRisks extends FakeDriver {
  closed = false;
  override loginRisks(): Promise<string[]> {
    return Promise.reject(
      new DbError(
        "query",
        "permission denied for table pg_auth_members",
      ),
    );
  }
  override close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

Deno.test("probeConnection() says a login's powers could not be checked, never that it has none", async () => {
  const driver = new UnknownRisks("postgres");
  const report = await probeConnection(
    CONNECTION,
    "/nonexistent/known_hosts",
    defaultSshContext([]),
    () => driver,
  );
  assertEquals(report.outcome, "ok");
  if (report.outcome !== "ok") return;
  assertEquals(report.risks, [
    "could not be checked for powers beyond reading (permission denied for table pg_auth_members)",
  ]);
  assertEquals(driver.closed, true);
});

Deno.test("probeConnection() names the AI login's unchecked powers in its step", async () => {
  const driver = new UnknownRisks("postgres");
  const report = await probeConnection(
    { ...CONNECTION, aiLogin: { user: "dbport_ai_shop", password: "p" } },
    "/nonexistent/known_hosts",
    defaultSshContext([]),
    () => driver,
  );
  assertEquals(report.outcome, "ok");
  assertMatch(
    report.steps.at(-1)?.text ?? "",
    /AI reads run as "dbport_ai_shop", which could not be checked for powers beyond reading \(permission denied/,
  );
});

Deno.test("probeConnection() passes a login's known powers through", async () => {
  const driver = new FakeDriver("postgres");
  driver.loginRisks = () => Promise.resolve(["is a superuser"]);
  const report = await probeConnection(
    CONNECTION,
    "/nonexistent/known_hosts",
    defaultSshContext([]),
    () => driver,
  );
  assertEquals(
    report.outcome === "ok" ? report.risks : null,
    ["is a superuser"],
  );
});

Deno.test("fixFor() sends a client certificate's failure to sslcert, sslkey and sslpassword, not to the login's password", () => {
  for (
    const message of [
      "the URL's sslpassword does not decrypt the client key sslkey names (/k.key): a wrong passphrase",
      "the client certificate file the URL's sslcert names (/c.pem) could not be read: no such file",
      "connection requires a valid client certificate [SQLSTATE 28000]",
    ]
  ) {
    assertMatch(
      fixFor(CONNECTION, message),
      /^check the client certificate in --url: sslcert and sslkey/,
      message,
    );
  }
  assertMatch(
    fixFor(CONNECTION, 'password authentication failed for user "owner"'),
    /^check the user in --url and the password/,
  );
});
