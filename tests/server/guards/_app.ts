/** A one-route app around a single guard, for testing it alone. */
import { Hono, type MiddlewareHandler } from "hono";
import { DEFAULT_SETTINGS, type Settings } from "../../../lib/app/settings.ts";
import { HttpError } from "../../../lib/server/http_error.ts";
import type { ServerState } from "../../../lib/server/state.ts";

/** Server state for a guard under test. */
export function testState(
  settings: Partial<Settings> = {},
  port = 4000,
): ServerState {
  return {
    settings: { ...structuredClone(DEFAULT_SETTINGS) as Settings, ...settings },
    port,
    stopping: false,
    instanceId: "i",
  };
}

/** An app whose only route answers 200 "passed" behind the given guards. */
// deno-lint-ignore no-explicit-any
export function guarded(...guards: MiddlewareHandler<any>[]): Hono<any> {
  // deno-lint-ignore no-explicit-any
  const app = new Hono<any>();
  app.onError((error) =>
    error instanceof HttpError
      ? error.toResponse()
      : new Response("boom", { status: 500 })
  );
  for (const guard of guards) app.use("/mcp", guard);
  app.post("/mcp", (c) => c.text("passed"));
  return app;
}
