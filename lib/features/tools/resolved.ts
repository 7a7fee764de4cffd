/**
 * A connection a tool works on, once resolved (access.ts): a leaf, so that
 * the preview and the statement runners can name it without importing the
 * access checks.
 *
 * @module
 */

import type { SavedConnection } from "../../app/connections.ts";
import type { Driver } from "../../db/types.ts";

/** A connection a tool may work on, with its driver. */
export interface Resolved {
  connection: SavedConnection;
  driver: Driver;
  /** How messages name it: `"Demo shop"`. */
  label: string;
}
