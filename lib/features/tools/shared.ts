/**
 * Argument specs several tools share.
 *
 * @module
 */

import type { StringArgument } from "./arguments.ts";

/** `connection_id`: a connection's id or its exact name (any case). */
export const CONNECTION_ID: StringArgument = {
  type: "string",
  description: "Id or name from list_connections.",
};

/** `schema`: a schema, MySQL database or attached SQLite database. */
export const SCHEMA: StringArgument = { type: "string" };
