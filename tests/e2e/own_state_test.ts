/**
 * dbport's own state database (token hashes, the activity log, every
 * client's history) is never served as a SQLite connection, whether the
 * saved connection names it, a symbolic link to it or a hard link.
 */

import { assertMatch } from "@std/assert";
import { saveConnections } from "../../lib/app/connections.ts";
import { inAppDir } from "../../lib/app/paths.ts";
import { CONNECTIONS_FILE, STATE_DB_FILE } from "../../lib/base/identity.ts";
import { savedConnection } from "../_connections.ts";
import { startTestServer } from "../_server.ts";
import { callTool, toolErrorText } from "../_tool_call.ts";

Deno.test("a saved SQLite connection naming dbport's own state.db is refused, by path, symbolic link or hard link", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-own-state-" });
  const elsewhere = await Deno.makeTempDir({ prefix: "dbport-own-link-" });
  try {
    const state = inAppDir(home, STATE_DB_FILE);
    await Deno.symlink(state, `${elsewhere}/innocent.db`);
    const direct = savedConnection({ engine: "sqlite", url: state }, "State");
    const linked = savedConnection(
      { engine: "sqlite", url: `${elsewhere}/innocent.db` },
      "Innocent",
    );
    const hard = savedConnection(
      { engine: "sqlite", url: `${elsewhere}/hard.db` },
      "Hard",
    );
    await saveConnections(inAppDir(home, CONNECTIONS_FILE), [
      direct,
      linked,
      hard,
    ]);
    await using server = await startTestServer({ home });
    // state.db exists once the server started: a hard link to it now.
    await Deno.link(state, `${elsewhere}/hard.db`);
    for (const connection of [direct, linked, hard]) {
      const answer = await callTool(server, "execute_query", {
        connection_id: connection.id,
        query: "select name from sqlite_schema",
      });
      assertMatch(toolErrorText(answer), /dbport's own state/);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(elsewhere, { recursive: true });
  }
});
