/**
 * `list_connections`: the connections this caller may use, sorted by name,
 * never with a user name or password.
 *
 * @module
 */

import * as s from "../../base/schema.ts";
import { ENGINES } from "../../db/engines.ts";
import { describeTarget } from "../../db/target.ts";
import type { ToolEntry } from "../catalog.ts";
import type { Principal } from "../context.ts";
import { visibleConnections } from "./access.ts";
import { defineTool } from "./define.ts";
import type { FeatureDeps } from "../deps.ts";

/** One connection as `list_connections` names it. */
const CONNECTION = s.object({
  id: s.string(),
  name: s.string(),
  type: s.string(),
  host: s.nullable(s.string()),
  port: s.nullable(s.integer()),
  database: s.nullable(s.string()),
  is_connected: s.boolean(),
  external_access: s.enumOf(["readOnly", "readWrite"]),
  ai_policy: s.enumOf(["alwaysAllow", "askEachTime"]),
  safe_mode: s.enumOf(["silent", "alert", "alertFull", "readOnly"]),
  login_warning: s.string({
    description:
      "Present when the connection's login can do more than read data (a superuser, server files, programs, other sessions): dbport's checks keep AI reads read-only, but the database itself does not.",
  }),
}, [
  "id",
  "name",
  "type",
  "host",
  "port",
  "database",
  "is_connected",
  "external_access",
  "ai_policy",
  "safe_mode",
]);

/** What `list_connections` answers (and `dbport://connections` reads). */
const OUTPUT = s.object({ connections: s.array(CONNECTION) }, [
  "connections",
]);

/** The `list_connections` payload. */
export type ConnectionList = s.Infer<typeof OUTPUT>;

/** The `list_connections` tool. */
export function listConnectionsTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "list_connections",
    description:
      "Database connections you may use (id, name, engine, policy). Start here.",
    arguments: { properties: {}, required: [] },
    outputSchema: OUTPUT,
    annotations: {
      title: "List connections",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    run(_args, ctx) {
      return Promise.resolve(connectionList(deps, ctx.principal));
    },
  });
}

/** The `list_connections` payload (the tool's, and `dbport://connections`'). */
export function connectionList(
  deps: FeatureDeps,
  principal: Principal,
): ConnectionList {
  const collator = new Intl.Collator(undefined, { numeric: true });
  const connections = visibleConnections(deps, principal)
    .sort((a, b) => collator.compare(a.name, b.name) || (a.id < b.id ? -1 : 1))
    .map((connection) => {
      const target = describeTarget(connection.engine, connection.url);
      return {
        id: connection.id,
        name: connection.name,
        type: ENGINES[connection.engine].typeName(connection.url),
        host: target?.host ?? null,
        port: target?.port ?? null,
        database: target?.database ?? null,
        is_connected: deps.pool.isConnected(connection.id),
        external_access: connection.externalAccess,
        ai_policy: connection.aiPolicy,
        safe_mode: connection.safeMode,
        ...loginWarning(deps.pool.risks(connection.id), connection.name),
      };
    });
  return { connections };
}

/** The plain warning about a login that can do more than read, if any. */
export function loginWarning(
  risks: readonly string[] | null,
  name: string,
): { login_warning?: string } {
  if (risks === null || risks.length === 0) return {};
  return {
    login_warning: `The login of ${JSON.stringify(name)} ${
      risks.join(", ")
    }: the database itself would let it read or write files or end sessions, so only dbport's checks keep AI reads read-only. The user can make a least-privilege login for AI reads with: deno task dbport connections harden ${
      JSON.stringify(name)
    } --apply`,
  };
}
