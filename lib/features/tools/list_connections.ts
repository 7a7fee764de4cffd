/**
 * `list_connections`: the connections this caller may use, sorted by name,
 * never with a user name or password.
 *
 * @module
 */

import { ENGINES } from "../../db/engines.ts";
import { describeTarget } from "../../db/target.ts";
import type { ToolEntry } from "../catalog.ts";
import type { JsonObject } from "../../protocol/jsonrpc.ts";
import type { Principal } from "../context.ts";
import { visibleConnections } from "./access.ts";
import { defineTool } from "./define.ts";
import type { FeatureDeps } from "../deps.ts";

const nullable = (type: string) => ({ type: [type, "null"] });

/** The `list_connections` tool. */
export function listConnectionsTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "list_connections",
    description:
      "Database connections you may use (id, name, engine, policy). Start here.",
    arguments: { properties: {}, required: [] },
    outputSchema: {
      type: "object",
      properties: {
        connections: {
          type: "array",
          items: {
            type: "object",
            properties: {
              id: { type: "string" },
              name: { type: "string" },
              type: { type: "string" },
              host: nullable("string"),
              port: nullable("integer"),
              database: nullable("string"),
              is_connected: { type: "boolean" },
              external_access: { enum: ["readOnly", "readWrite"] },
              ai_policy: { enum: ["alwaysAllow", "askEachTime"] },
              safe_mode: { enum: ["silent", "alert", "alertFull", "readOnly"] },
              login_warning: {
                type: "string",
                description:
                  "Present when the connection's login can do more than read data (a superuser, server files, programs, other sessions): dbport's checks keep AI reads read-only, but the database itself does not.",
              },
            },
            required: [
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
            ],
            additionalProperties: false,
          },
        },
      },
      required: ["connections"],
      additionalProperties: false,
    },
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
): JsonObject {
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
