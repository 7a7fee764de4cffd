/**
 * Argument specs several tools share.
 *
 * @module
 */

import { string } from "../../base/schema.ts";

/** `connection_id`: a connection's id or its exact name (any case). */
export const CONNECTION_ID = string({
  description: "Id or name from list_connections.",
});

/** `schema`: a schema, MySQL database or attached SQLite database. */
export const SCHEMA = string();
