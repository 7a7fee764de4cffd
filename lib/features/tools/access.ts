/**
 * Which connections a caller may see and use. The connection's external
 * access, its AI policy and the token's allowlist apply on top of each other
 * (contract: "What the service does", "Authentication" 3–4): a connection
 * that any of them excludes is hidden from `list_connections` and refused
 * elsewhere with `-33007`.
 *
 * @module
 */

import {
  driverSpec,
  isUuid,
  type SavedConnection,
} from "../../app/connections.ts";
import type { Driver } from "../../db/types.ts";
import { wire } from "../../protocol/errors.ts";
import type { Principal } from "../context.ts";
import type { ToolDeps } from "./deps.ts";
import { invalidArgument, ToolFailure } from "./failure.ts";

/** Whether `principal` may see `connection` at all. */
export function isVisible(
  connection: SavedConnection,
  principal: Principal,
): boolean {
  return connection.externalAccess !== "blocked" &&
    connection.aiPolicy !== "never" &&
    (principal.connections === null ||
      principal.connections.has(connection.id));
}

/** The connections `principal` may see. */
export function visibleConnections(
  deps: ToolDeps,
  principal: Principal,
): SavedConnection[] {
  return deps.connections.all().filter((connection) =>
    isVisible(connection, principal)
  );
}

/** A malformed `connection_id` is the tool error `invalid_argument`. */
export function checkConnectionId(id: string): void {
  if (!isUuid(id)) {
    throw invalidArgument(
      `connection_id must be a connection's UUID from list_connections, got ${
        JSON.stringify(id.slice(0, 80))
      }`,
    );
  }
}

/** A connection a tool may work on, with its driver. */
export interface Resolved {
  connection: SavedConnection;
  driver: Driver;
  /** How messages name it: `"Demo shop"`. */
  label: string;
}

/**
 * Resolve `connection_id` for a tool call: a malformed id is
 * `invalid_argument`, an unknown one `not_found`, a hidden one `-33007`, and
 * one whose AI policy asks each time is `denied` until the consent flow can
 * ask the user.
 */
export function resolveConnection(
  deps: ToolDeps,
  principal: Principal,
  id: string,
): Resolved {
  checkConnectionId(id);
  const connection = deps.connections.byId(id);
  if (connection === undefined) {
    throw new ToolFailure(
      "not_found",
      `no saved connection has the id ${id}; list_connections shows the ones you can use`,
    );
  }
  if (!isVisible(connection, principal)) {
    throw wire.forbidden(
      `Forbidden: the connection ${id} is not available to this client (the user's external access, AI policy or the token's connection list excludes it)`,
      { connectionId: id },
    );
  }
  const label = JSON.stringify(connection.name);
  if (connection.aiPolicy === "askEachTime") {
    throw new ToolFailure(
      "denied",
      `the user's approval is required before an AI client uses ${label}, and this server cannot ask for it yet; the user can set its AI policy to "alwaysAllow"`,
    );
  }
  return {
    connection,
    label,
    driver: deps.pool.get(driverSpec(connection)),
  };
}
