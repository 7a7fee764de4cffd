/**
 * Methods that exist only in the legacy era: `ping` and `logging/setLevel`.
 *
 * @module
 */

import { isOneOf } from "../base/one_of.ts";
import { wire } from "../protocol/errors.ts";
import type { Handler } from "./context.ts";

/** RFC 5424 levels, as MCP names them. */
export const LOG_LEVELS = Object.freeze(
  [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
  ] as const,
);

/** `ping`: an empty result. */
export const ping: Handler = () => Promise.resolve({});

/**
 * `logging/setLevel`: validates the level; the session records it. No log
 * notifications are sent today, so nothing else changes.
 */
export const setLevel: Handler = (ctx) => {
  const level = ctx.params.level;
  if (
    typeof level !== "string" ||
    !isOneOf(LOG_LEVELS, level)
  ) {
    return Promise.reject(
      wire.invalidParams(
        `Invalid params for logging/setLevel: level must be one of ${
          LOG_LEVELS.join(", ")
        }, got ${JSON.stringify(level)}`,
      ),
    );
  }
  if (ctx.session !== null) ctx.session.logLevel = level;
  return Promise.resolve({});
};
