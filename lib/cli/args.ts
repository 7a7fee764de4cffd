/**
 * Command-line flags over `node:util`'s `parseArgs`, strict: an unknown flag or
 * a missing value is a {@linkcode UsageError} that names it.
 *
 * @module
 */

import { messageOf } from "../base/message_of.ts";
import { parseArgs } from "node:util";
import { UsageError } from "./io.ts";

/** A flag's kind. */
export type FlagSpec = Record<string, { type: "string" | "boolean" }>;

/** The parsed flags and positionals. */
export interface Parsed {
  flags: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** Parse `args` for `command` against `spec`. */
export function parseFlags(
  command: string,
  args: string[],
  spec: FlagSpec,
): Parsed {
  // `--max-calls-per-minute -1`: parseArgs calls a value that looks like a
  // flag "ambiguous"; a negative number is a value, so it reaches the flag's
  // own check, which says what is allowed.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const name = arg.startsWith("--") ? arg.slice(2) : undefined;
    if (
      name !== undefined && spec[name]?.type === "string" &&
      next !== undefined && /^-\d/.test(next)
    ) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  try {
    const { values, positionals } = parseArgs({
      args: joined,
      options: spec,
      strict: true,
      allowPositionals: true,
    });
    return {
      flags: values as Record<string, string | boolean | undefined>,
      positionals,
    };
  } catch (error) {
    const message = messageOf(error);
    throw new UsageError(`${command}: ${message.split("\n")[0]}`);
  }
}

/** A string flag's value, if given. */
export function stringFlag(parsed: Parsed, name: string): string | undefined {
  const value = parsed.flags[name];
  return typeof value === "string" ? value : undefined;
}

/** A positive integer flag, or the fallback. */
export function integerFlag(
  parsed: Parsed,
  name: string,
  fallback: number,
  max: number,
): number {
  const text = stringFlag(parsed, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > max) {
    throw new UsageError(
      `--${name} must be a whole number from 1 to ${max}, got "${text}"`,
    );
  }
  return value;
}

/** Format a time for humans: ISO 8601 in UTC to the second, or a dash. */
export function formatTime(ms: number | null): string {
  if (ms === null) return "-";
  // Local time for people (`2026-11-25 17:20:01`); exports (--json, --csv)
  // keep ISO 8601 in UTC.
  const at = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${
    two(at.getHours())
  }:${two(at.getMinutes())}:${two(at.getSeconds())}`;
}

/** ISO 8601 UTC times in a text (a log entry's detail) as local time. */
export function localTimes(text: string): string {
  return text.replace(
    /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g,
    (iso) => formatTime(Date.parse(iso)),
  );
}

/** Lay rows out in aligned columns under a header. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length))
  );
  const line = (cells: string[]) =>
    cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)];
}
