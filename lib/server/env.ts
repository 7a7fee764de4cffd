/**
 * The Hono environment of the MCP app: the `node:http` bindings the listener
 * passes (absent when a test calls `app.request()` directly) and the
 * variables the guards set for the handlers after them.
 *
 * @module
 */

import type { HttpBindings } from "@hono/node-server";
import type { BodyVariables } from "./guards/body_limit.ts";
import type { PrincipalVariables } from "./auth/authenticate.ts";

/** The app's environment. */
export type AppEnv = {
  /** Read with `?.`: `app.request()` in tests passes no bindings at all. */
  Bindings: Partial<HttpBindings>;
  Variables: BodyVariables & PrincipalVariables;
};
