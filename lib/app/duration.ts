/**
 * Token lifetimes as the CLI takes them: `90s`, `30m`, `12h`, `30d`, or
 * `never`.
 *
 * @module
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** The default lifetime of a user token (the app's default: 90 days). */
export const DEFAULT_TOKEN_LIFETIME = "90d";

/** Parse a lifetime: milliseconds, null for `never`, or an error message. */
export function parseDuration(
  text: string,
): { ok: true; ms: number | null } | { ok: false; message: string } {
  const trimmed = text.trim();
  if (trimmed === "never") return { ok: true, ms: null };
  const match = /^(\d{1,6})([smhd])$/.exec(trimmed);
  if (match === null || Number(match[1]) === 0) {
    return {
      ok: false,
      message:
        `Invalid duration "${text}": use a positive number with s, m, h or d (90s, 30m, 12h, 30d), or "never"`,
    };
  }
  return { ok: true, ms: Number(match[1]) * UNIT_MS[match[2]!]! };
}
