/**
 * Argument specs several tools share.
 *
 * @module
 */

import { schemaWords } from "../../db/engines.ts";
import type { StringArgument } from "./arguments.ts";

/** `connection_id`: a UUID from `list_connections`. */
export const CONNECTION_ID: StringArgument = {
  type: "string",
  description: "The connection's id (a UUID) from list_connections.",
};

/** `schema`: what the engine calls a schema (`ENGINES[…].schemaWord`). */
export const SCHEMA: StringArgument = {
  type: "string",
  description: `The ${schemaWords()}, e.g. public or main.`,
};
