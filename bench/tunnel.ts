/**
 * What an SSH tunnel costs (docs/connections.md "SSH tunnels"): W1's
 * `SELECT 1` on PostgreSQL at concurrency 8, once over a direct connection
 * and once through a one-hop tunnel to a local OpenSSH server (Debian's
 * openssh-server), in interleaved rounds on one dbport.
 *
 * @module
 */

import type { SavedConnection } from "../lib/app/connections.ts";
import { saveConnections } from "../lib/app/connections.ts";
import { inAppDir } from "../lib/app/paths.ts";
import { CONNECTIONS_FILE, KNOWN_HOSTS_FILE } from "../lib/base/identity.ts";
import { POSTGRES_URL } from "../tests/_db.ts";
import { PASSPHRASE, startSshd } from "../tests/_sshd.ts";
import { type LoadResult, runLoad } from "./load.ts";
import { closeConnections, mcpRequest } from "./mcp_request.ts";
import { cpuMicros } from "./proc.ts";
import { mintToken, startDbport } from "./targets.ts";

/** The two figures, each the median of its rounds. */
export interface TunnelCost {
  direct: LoadResult;
  tunnel: LoadResult;
}

/** Measure both ways in `rounds` interleaved rounds of `seconds` each. */
export async function measureTunnel(
  dir: string,
  seconds: number,
  rounds: number,
  warmupSeconds: number,
): Promise<TunnelCost> {
  await using sshd = await startSshd();
  const home = `${dir}/dbport-home`;
  const base = {
    engine: "postgres",
    url: POSTGRES_URL,
    externalAccess: "readOnly",
    aiPolicy: "alwaysAllow",
    safeMode: "silent",
  } as const;
  const direct: SavedConnection = {
    id: crypto.randomUUID(),
    name: "direct",
    ...base,
  };
  const tunnelled: SavedConnection = {
    id: crypto.randomUUID(),
    name: "through SSH",
    ...base,
    ssh: {
      host: "127.0.0.1",
      port: sshd.port,
      user: "root",
      identityFile: sshd.userKey,
      passphrase: PASSPHRASE,
    },
  };
  await saveConnections(inAppDir(home, CONNECTIONS_FILE), [direct, tunnelled]);
  await Deno.writeTextFile(
    inAppDir(home, KNOWN_HOSTS_FILE),
    sshd.knownHostsLine + "\n",
  );
  const token = await mintToken(home, "readOnly", "bench tunnel");
  await using dbport = await startDbport({
    home,
    sqlitePath: "",
    ids: { postgres: "", mysql: "", sqlite: "" },
    token,
  });
  const query = (id: string) =>
    mcpRequest(dbport, "tools/call", {
      name: "execute_query",
      arguments: { connection_id: id, query: "select 1" },
    });
  const results: Record<"direct" | "tunnel", LoadResult[]> = {
    direct: [],
    tunnel: [],
  };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0
      ? (["direct", "tunnel"] as const)
      : (["tunnel", "direct"] as const);
    for (const which of order) {
      try {
        results[which].push(
          await runLoad({
            concurrency: 8,
            seconds,
            warmupSeconds,
            request: query(which === "direct" ? direct.id : tunnelled.id),
            cpu: () => cpuMicros(dbport.pid),
          }),
        );
      } finally {
        closeConnections();
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
  const middle = (list: LoadResult[]) =>
    [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)]!;
  return { direct: middle(results.direct), tunnel: middle(results.tunnel) };
}
