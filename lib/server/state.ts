/**
 * The live state guards read on every request: settings (re-read while the
 * server runs), the bound port and whether the server is stopping.
 *
 * @module
 */

import type { Settings } from "../app/settings.ts";

/** Mutable server state, shared by reference. */
export interface ServerState {
  settings: Settings;
  /** The port actually bound (0 until it is). */
  port: number;
  stopping: boolean;
  readonly instanceId: string;
}
