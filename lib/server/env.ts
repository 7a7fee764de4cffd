/**
 * The Hono environment of the MCP app: the `node:http` bindings the listener
 * passes (absent when a test calls `app.request()` directly) and the
 * variables the guards set for the handlers after them. A leaf: the guards
 * that set the variables import their types from here.
 *
 * @module
 */

import type { HttpBindings } from "@hono/node-server";
import type { Principal } from "../features/context.ts";

/** Context variables `bodyLimit` provides: the body, read once. */
export type BodyVariables = { body: Uint8Array };

/** Context variables `authenticate` provides: who calls. */
export type PrincipalVariables = { principal: Principal };

/** The app's environment. */
export type AppEnv = {
  /** Read with `?.`: `app.request()` in tests passes no bindings at all. */
  Bindings: Partial<HttpBindings>;
  Variables: BodyVariables & PrincipalVariables;
};
