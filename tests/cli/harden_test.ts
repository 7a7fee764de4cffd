/**
 * Saving a hardened connection: only its AI login is written, over what the
 * file holds now, and a connection removed or pointed elsewhere while the
 * login was made is refused.
 */

import { assertEquals, assertRejects } from "@std/assert";
import { loadConnections, saveConnections } from "../../lib/app/connections.ts";
import { saveHardened } from "../../lib/cli/harden.ts";
import { savedConnection } from "../_connections.ts";

Deno.test("saveHardened() adds the AI login to the file's own entry, and refuses one that changed meanwhile", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dbport-harden-save-" });
  const path = `${dir}/connections.json`;
  try {
    const shown = savedConnection(
      { engine: "postgres", url: "postgres://u@db.example/shop" },
      "Shop",
    );
    const hardened = { ...shown, aiLogin: { user: "ai", password: "pw" } };
    // The policy was changed on the console while the plan waited.
    await saveConnections(path, [{ ...shown, externalAccess: "blocked" }]);
    await saveHardened(path, hardened);
    const loaded = await loadConnections(path);
    assertEquals(loaded.ok && loaded.connections[0], {
      ...shown,
      externalAccess: "blocked",
      aiLogin: { user: "ai", password: "pw" },
    });
    await saveConnections(path, [{
      ...shown,
      url: "postgres://u@elsewhere.example/shop",
    }]);
    await assertRejects(
      () => saveHardened(path, hardened),
      Error,
      "was removed or changed",
    );
    await saveConnections(path, []);
    await assertRejects(
      () => saveHardened(path, hardened),
      Error,
      "was removed or changed",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
