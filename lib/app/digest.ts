/**
 * SHA-256 as lowercase hex: token hashes, credential keys for the lockout,
 * and the digest the activity log keeps instead of SQL text.
 *
 * @module
 */

import { createHash } from "node:crypto";

/** Hex SHA-256 of a text's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
