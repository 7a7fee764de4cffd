/**
 * A prompt's `connection` argument: a connection's name (case-insensitive,
 * exact) or its id. Only connections the caller may see are ever matched or
 * named in a message (docs/wire.md "Authentication" 3-4).
 *
 * @module
 */

import type { SavedConnection } from "../../app/connections.ts";
import { wire } from "../../protocol/errors.ts";
import type { Principal } from "../context.ts";
import type { FeatureDeps } from "../deps.ts";
import { visibleConnections } from "../tools/access.ts";

/** The visible connection `value` names; `-32602` naming the value otherwise. */
export function findConnection(
  deps: FeatureDeps,
  principal: Principal,
  value: string,
): SavedConnection {
  const visible = visibleConnections(deps, principal);
  const wanted = value.trim().toLowerCase();
  const byId = visible.find((connection) => connection.id === wanted);
  if (byId !== undefined) return byId;
  const named = visible.filter((connection) =>
    connection.name.toLowerCase() === wanted
  );
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    throw wire.invalidParams(
      `Invalid argument "connection": ${
        JSON.stringify(value)
      } names ${named.length} connections; give one of their ids: ${
        named.map((connection) => connection.id).join(", ")
      }`,
      { argument: "connection" },
    );
  }
  const names = visible.map((connection) => JSON.stringify(connection.name));
  throw wire.invalidParams(
    `Invalid argument "connection": no database connection ${
      JSON.stringify(value.slice(0, 120))
    } is available to this client; ${
      names.length === 0
        ? "none is"
        : `available: ${names.slice(0, 20).join(", ")}${
          names.length > 20 ? ", ..." : ""
        }`
    }`,
    { argument: "connection" },
  );
}
