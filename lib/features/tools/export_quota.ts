/**
 * The bound on `export_query`'s files taken together
 * (`maxExportTotalBytes`; unset, `maxExportBytes`): without it a token could
 * fill the user's disk with one export after another, each within one
 * file's limit. dbport refuses past the bound rather than prune: an export
 * file is the user's (opened later, or handed on), and deleting one they
 * have not yet looked at would lose it. Only dbport's own export files (by
 * their name, `exportFileName`) count; anything else the user keeps in the
 * directory is neither counted nor touched.
 *
 * @module
 */

import type { Settings } from "../../app/settings.ts";
import { ToolFailure } from "./failure.ts";

/** The name `exportFileName` gives: `20261125T153000Z-shop-1a2b3c4d.csv`. */
const EXPORT_FILE = /^\d{8}T\d{6}Z-[A-Za-z0-9_-]+-[0-9a-f]{8}\.[a-z]+$/;

/** The total bound of the exports directory, in bytes. */
export function exportTotalLimit(settings: Settings): number {
  return settings.maxExportTotalBytes ?? settings.maxExportBytes;
}

/** The bytes of dbport's own export files in `dir` (0 when it is absent). */
export async function exportedBytes(dir: string): Promise<number> {
  let total = 0;
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !EXPORT_FILE.test(entry.name)) continue;
      total += await Deno.lstat(`${dir}/${entry.name}`).then(
        (info) => info.size,
        () => 0,
      );
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return total;
}

/**
 * The bytes one more export may write: one file's limit, or what is left
 * of the total when less. Refuses when nothing is left, naming the setting.
 */
export async function exportRoom(
  dir: string,
  settings: Settings,
): Promise<{ bytes: number; setting: string }> {
  const total = exportTotalLimit(settings);
  const used = await exportedBytes(dir);
  const left = total - used;
  if (left <= 0) {
    throw new ToolFailure(
      "denied",
      `the exports directory already holds ${used} bytes of exports, and maxExportTotalBytes (${total} bytes) leaves no room: ask the user to delete old exports from ${dir} or to raise maxExportTotalBytes in settings.json`,
    );
  }
  return left < settings.maxExportBytes
    ? {
      bytes: left,
      setting:
        `maxExportTotalBytes (${total} bytes for all exports; ${left} were left)`,
    }
    : {
      bytes: settings.maxExportBytes,
      setting: `maxExportBytes (${settings.maxExportBytes} bytes)`,
    };
}
