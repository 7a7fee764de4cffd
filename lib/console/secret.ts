/**
 * The console's kept secret: 32 random bytes in `console.secret` (0600) in
 * the app directory, made at the first start and read at every later one.
 * Everything the console needs to be the same across restarts of `serve` is
 * derived from it with {@linkcode deriveSecret} under its own label: the
 * `?key=` of its address, its session ids (a browser tab's cookie keeps
 * working after a restart) and anything else a start must reproduce.
 *
 * @module
 */

import { createHmac } from "node:crypto";
import { writeFileAtomic } from "../app/atomic_file.ts";
import { inAppDir } from "../app/paths.ts";
import { constantTimeEqual } from "../base/constant_time.ts";

/** The file in the app directory that keeps the console's secret. */
export const CONSOLE_SECRET_FILE = "console.secret";

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The kept secret of the console in `home`: read, or made and written 0600
 * when missing or not 64 hex digits.
 */
export async function loadConsoleSecret(home: string): Promise<string> {
  const path = inAppDir(home, CONSOLE_SECRET_FILE);
  const text = await Deno.readTextFile(path).catch(() => "");
  const kept = text.trim();
  if (HEX64.test(kept)) return kept;
  const made = randomSecret();
  await writeFileAtomic(path, made + "\n", 0o600);
  return made;
}

/** HMAC-SHA256 of `label` under `secret`, as 64 hex digits. */
export function deriveSecret(secret: string, label: string): string {
  return createHmac("sha256", secret).update(label).digest("hex");
}

/** 32 random bytes as hex. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compare secrets in time independent of where they differ. */
export function sameSecret(given: string, expected: string): boolean {
  return constantTimeEqual(given, expected);
}
