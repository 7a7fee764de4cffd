/**
 * The signal that a client's connection dropped before its answer was sent
 * (docs/wire.md "Cancellation" - a disconnect cancels the request).
 *
 * On `node:http` it comes straight from the ServerResponse's `close`: asking
 * the adapter for `c.req.raw.signal` instead builds a whole web Request for
 * each request, a visible share of the CPU per request (bench W1 profile).
 * Elsewhere (Hono's `app.request()` in tests) the Request's own signal.
 *
 * @module
 */

import type { Context } from "hono";
import type { AppEnv } from "./env.ts";

/** The part of a node:http ServerResponse this reads. */
interface Outgoing {
  on(event: "close", listener: () => void): unknown;
  readonly writableFinished: boolean;
}

function isOutgoing(value: unknown): value is Outgoing {
  return typeof value === "object" && value !== null &&
    typeof (value as { on?: unknown }).on === "function" &&
    "writableFinished" in value;
}

/** Aborts when the connection closes before the answer was written whole. */
export function connectionSignal(c: Context<AppEnv>): AbortSignal {
  const outgoing = c.env?.outgoing;
  return isOutgoing(outgoing) ? outgoingSignal(outgoing) : c.req.raw.signal;
}

/** Aborts when `outgoing` closes before it was written whole. */
export function outgoingSignal(outgoing: Outgoing): AbortSignal {
  const controller = new AbortController();
  outgoing.on("close", () => {
    if (!outgoing.writableFinished) {
      controller.abort(new Error("Client connection prematurely closed"));
    }
  });
  return controller.signal;
}
