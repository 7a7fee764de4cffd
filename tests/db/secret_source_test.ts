/**
 * A failing `passwordCommand` says why to everyone, but names its program
 * (a path on the user's machine) only to the owner's own terminal.
 */

import { assert, assertMatch, assertRejects } from "@std/assert";
import { DbError } from "../../lib/db/errors.ts";
import { openDriver } from "../../lib/db/open_driver.ts";
import { readSecret } from "../../lib/db/secret_source.ts";
import { needs, POSTGRES_URL } from "../_db.ts";

/** A program in a directory whose name a client must never see. */
async function programs() {
  const dir = await Deno.makeTempDir({ prefix: "dbport-vault-of-alice-" });
  const failing = `${dir}/alice-keychain-helper`;
  await Deno.writeTextFile(
    failing,
    "#!/bin/sh\necho 'vault locked: s3cr3t-hint'\nexit 3\n",
  );
  await Deno.chmod(failing, 0o700);
  const silent = `${dir}/alice-silent-helper`;
  await Deno.writeTextFile(silent, "#!/bin/sh\nexit 0\n");
  await Deno.chmod(silent, 0o700);
  return {
    dir,
    failing,
    silent,
    missing: `${dir}/alice-missing-helper`,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

Deno.test("readSecret(): a client is told its passwordCommand failed, never the program's path; the owner is", async () => {
  await using p = await programs();
  for (
    const [program, why] of [
      [p.failing, /which failed \(exit 3\)/],
      [p.silent, /which printed nothing/],
      [p.missing, /which could not be run \(not found\)/],
    ] as const
  ) {
    const client = await assertRejects(
      () => readSecret({ command: [program, "--vault", "alice"] }, "it"),
      DbError,
    );
    assertMatch(client.message, why);
    assertMatch(client.message, /its passwordCommand/);
    for (const leak of [p.dir, "alice", "keychain", "s3cr3t", "vault"]) {
      assert(!client.message.includes(leak), `${leak}: ${client.message}`);
    }
    const owner = await assertRejects(
      () => readSecret({ command: [program] }, "it", "owner"),
      DbError,
    );
    assert(owner.message.includes(program), owner.message);
    assertMatch(owner.message, why);
    assert(!owner.message.includes("s3cr3t"), owner.message);
  }
});

Deno.test({
  name:
    "a saved connection's failing passwordCommand: the client's error names no program, the owner's CLI driver does",
  ignore: needs("postgres").ignore,
  async fn() {
    await using p = await programs();
    const spec = {
      id: crypto.randomUUID(),
      engine: "postgres" as const,
      url: POSTGRES_URL.replace(/:[^:@/]*@/, "@"),
      passwordSource: { command: [p.failing] },
      name: "Shop",
    };
    for (const audience of ["clients", "owner"] as const) {
      const driver = openDriver(spec, audience);
      try {
        const error = await assertRejects(
          () =>
            driver.version({
              signal: new AbortController().signal,
              timeoutMs: 10_000,
            }),
          DbError,
        );
        assertMatch(error.message, /which failed \(exit 3\)/);
        assert(
          error.message.includes(p.failing) === (audience === "owner"),
          `${audience}: ${error.message}`,
        );
      } finally {
        await driver.close();
      }
    }
  },
});
