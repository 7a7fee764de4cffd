/**
 * Test servers over saved connections to fixture databases.
 */

import type { SavedConnection } from "../lib/app/connections.ts";
import { saveConnections } from "../lib/app/connections.ts";
import { inAppDir } from "../lib/app/paths.ts";
import type { Engine } from "../lib/db/types.ts";
import { CONNECTIONS_FILE } from "../lib/base/identity.ts";
import type { JsonObject } from "../lib/protocol/jsonrpc.ts";
import { startTestServer, type TestServer } from "./_server.ts";
import type { StartOptions } from "../lib/serve.ts";

/** A saved connection to a fixture: read-only, always allowed, Safe Mode alert. */
export function savedConnection(
  fixture: { engine: Engine; url: string },
  name: string,
  policy: Partial<SavedConnection> = {},
): SavedConnection {
  return {
    id: crypto.randomUUID(),
    name,
    engine: fixture.engine,
    url: fixture.url,
    externalAccess: "readOnly",
    aiPolicy: "alwaysAllow",
    safeMode: "alert",
    ...policy,
  };
}

/** A test server whose home holds `connections`; removes its home on dispose. */
export async function serverWith(
  connections: SavedConnection[],
  settings: JsonObject = {},
  options: Partial<StartOptions> = {},
): Promise<TestServer> {
  const home = await Deno.makeTempDir({ prefix: "dbport-tools-" });
  await saveConnections(inAppDir(home, CONNECTIONS_FILE), connections);
  const server = await startTestServer({ ...options, home, settings });
  const dispose = server[Symbol.asyncDispose].bind(server);
  return Object.assign(server, {
    async [Symbol.asyncDispose]() {
      await dispose();
      await Deno.remove(home, { recursive: true });
    },
  });
}
