/**
 * A JSON file of one list (`connections.json`, `queries.json`), read and
 * edited the same way whatever it lists: a missing file holds none; an
 * edit runs under the file's lock on the list as the file holds it now,
 * and a malformed file is never overwritten.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { isJsonObject, type JsonObject } from "../protocol/jsonrpc.ts";
import { editFile, type LockOptions } from "./file_lock.ts";

/** A list as a file holds it, or why it holds none. */
export type ParsedList<T> =
  | { ok: true; items: T[] }
  | { ok: false; message: string };

/** How one kind of list file reads and writes. */
export interface ListFile<T> {
  /** The file's list, or why its text is not one. */
  parse(text: string): ParsedList<T>;
  /** The file's text holding `items`; may throw to refuse them. */
  text(items: readonly T[]): string;
}

/** Read the list at `path`; a missing file holds none. */
export async function loadParsedFile<T>(
  path: string,
  file: Pick<ListFile<T>, "parse">,
): Promise<ParsedList<T>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { ok: true, items: [] };
    return { ok: false, message: `Cannot read ${path}: ${messageOf(error)}` };
  }
  return file.parse(text);
}

/**
 * Change the list at `path` under the file's lock: `change` gets it as the
 * file holds it now (never a copy read earlier) and returns the new list;
 * it may throw to refuse (nothing is written). A malformed file is never
 * overwritten. Returns the list written.
 */
export async function editParsedFile<T>(
  path: string,
  file: ListFile<T>,
  change: (fresh: T[]) => readonly T[] | Promise<readonly T[]>,
  options: LockOptions = {},
): Promise<readonly T[]> {
  let written: readonly T[] = [];
  await editFile(path, async (text) => {
    const parsed = file.parse(text ?? "");
    if (!parsed.ok) throw new Error(parsed.message);
    written = await change(parsed.items);
    return file.text(written);
  }, options);
  return written;
}

/**
 * The array under `key` in a list file's JSON text (`{"<key>": [...]}`),
 * with the object that holds it; an empty text holds none. Why not, in
 * words that name `source`.
 */
export function jsonList(
  text: string,
  source: string,
  key: string,
):
  | { ok: true; items: unknown[]; object: JsonObject }
  | { ok: false; message: string } {
  if (text.trim() === "") return { ok: true, items: [], object: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      message: `Cannot parse ${source}: ${messageOf(error)}`,
    };
  }
  if (!isJsonObject(value) || !Array.isArray(value[key])) {
    return {
      ok: false,
      message: `Cannot read ${source}: it must be an object {"${key}": [...]}`,
    };
  }
  return { ok: true, items: value[key] as unknown[], object: value };
}
