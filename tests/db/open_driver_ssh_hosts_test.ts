/**
 * A connection through SSH whose URL names several hosts: a tunnel
 * forwards to one address, and such a URL was forwarded to the host
 * list's text (failing as an unknown host after the tunnel opened). Refused
 * at the first call, before any SSH connection, naming why.
 */
import { assertEquals, assertRejects } from "@std/assert";
import { openDriver } from "../../lib/db/open_driver.ts";
import { DbError } from "../../lib/db/errors.ts";

const CALL = { signal: new AbortController().signal, timeoutMs: 2_000 };

Deno.test("openDriver(): an SSH connection whose URL names several hosts fails at its first call naming why, and opens no SSH connection", async () => {
  // A listener standing for the bastion: nothing may connect to it.
  const bastion = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connects = 0;
  const accepting = (async () => {
    for await (const conn of bastion) {
      connects++;
      conn.close();
    }
  })();
  const driver = openDriver({
    id: crypto.randomUUID(),
    engine: "postgres",
    url: "postgres://u:pw@10.0.0.1:5432,10.0.0.2:5433/db",
    ssh: {
      host: "127.0.0.1",
      port: bastion.addr.port,
      user: "nobody",
      password: "ssh-secret",
    },
  });
  try {
    const error = await assertRejects(
      () => driver.version(CALL),
      DbError,
      "an SSH tunnel reaches one database host, and the connection's URL names 2",
    );
    assertEquals(error.kind, "connect");
    assertEquals(connects, 0);
  } finally {
    await driver.close();
    bastion.close();
    await accepting;
  }
});
