/**
 * Argument specs several tools share.
 *
 * @module
 */

import type { ArgumentSpec } from "./arguments.ts";

/** `connection_id`: a UUID from `list_connections`. */
export const CONNECTION_ID: ArgumentSpec = {
  type: "string",
  description: "The connection's id (a UUID) from list_connections.",
};

/** `schema`: a schema (PostgreSQL), database (MySQL) or attached database (SQLite). */
export const SCHEMA: ArgumentSpec = {
  type: "string",
  description:
    "Schema (PostgreSQL), database (MySQL/MariaDB) or attached database (SQLite, e.g. main).",
};
