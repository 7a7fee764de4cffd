/**
 * Protocol revisions and eras (docs/wire.md "Versioning").
 *
 * @module
 */

/** The revision we build against: stateless, `server/discover`, `_meta` envelope. */
export const MODERN_VERSION = "2026-07-28";

/** Revisions still answered through `initialize` and `Mcp-Session-Id`. */
export const LEGACY_VERSIONS: readonly string[] = Object.freeze([
  "2025-11-25",
  "2025-06-18",
]);

/**
 * The live list of accepted versions, newest first, served by `server/discover`
 * and in `data.supported` of `-32022`. `2025-03-26` is deliberately absent: it
 * requires JSON-RPC batching, which is not implemented (docs/wire.md "Versioning" 1).
 */
export const SUPPORTED_VERSIONS: readonly string[] = Object.freeze([
  MODERN_VERSION,
  ...LEGACY_VERSIONS,
]);

/** The two eras a request can belong to. */
export type Era = "modern" | "legacy";

/** Whether a version is one of the modern (stateless) revisions we accept. */
export function isModernVersion(version: string): boolean {
  return version === MODERN_VERSION;
}

/** Whether a version is one of the legacy revisions we accept. */
export function isLegacyVersion(version: string): boolean {
  return LEGACY_VERSIONS.includes(version);
}

/**
 * Whether a header version names the modern era or later. Dates compare as
 * text; anything at or after the modern revision that we do not know is still a
 * modern-era client (which must then send the `_meta` envelope).
 */
export function isModernOrLater(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= MODERN_VERSION;
}
