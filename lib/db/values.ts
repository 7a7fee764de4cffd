/**
 * The JSON mapping of values, the same on all three engines: 64-bit integers
 * and decimals as strings, dates and timestamps as ISO 8601 text, binary as
 * base64, JSON columns as JSON, NULL as null, non-finite floats as text.
 *
 * @module
 */

import { toBase64 } from "../protocol/base64.ts";
import type { Cell } from "./types.ts";

/** A binary value as base64. */
export function binaryCell(bytes: Uint8Array | ArrayBuffer): string {
  return toBase64(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
}

/** A float: finite as a number, NaN, infinities and -0 as text. */
export function floatCell(value: number): number | string {
  // JSON has no -0: it would read back as 0.
  if (Object.is(value, -0)) return "-0";
  return Number.isFinite(value) ? value : String(value);
}

/** An integer that fits a double exactly stays a number; others become text. */
export function integerCell(value: number | bigint): number | string {
  if (typeof value === "number") return value;
  return value >= BigInt(Number.MIN_SAFE_INTEGER) &&
      value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value.toString();
}

const DATE_TIME =
  /^(\d{4,}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d(?:\.\d+)?)(?:([+-]\d\d)(?::?(\d\d))?(?::?(\d\d))?|Z)?$/;

/**
 * Engine date-time text (`2024-01-02 10:00:00.5+00`) as ISO 8601
 * (`2024-01-02T10:00:00.5Z`), keeping the engine's full fractional precision.
 * Text that is not a date-time (`infinity`, BC dates) is returned unchanged.
 */
export function isoDateTime(text: string, zoned: boolean): string {
  const match = DATE_TIME.exec(text);
  if (match === null) return text;
  const [, date, time, hours, minutes, seconds] = match;
  let zone = "";
  if (hours !== undefined) {
    zone = hours === "+00" && (minutes ?? "00") === "00" && !seconds
      ? "Z"
      : `${hours}:${minutes ?? "00"}${seconds ? `:${seconds}` : ""}`;
  } else if (zoned || text.endsWith("Z")) {
    zone = "Z";
  }
  return `${date}T${time}${zone}`;
}

/**
 * A JSON document held as text. Objects and arrays are given as JSON; a
 * scalar document (null, a string, a number, true or false) is given as its
 * JSON text, so that a JSON `null` ("null") is never mistaken for SQL NULL
 * (null) and a JSON string `"x"` reads `"\"x\""`. Text that does not parse
 * is given as it is.
 */
export function jsonCell(value: unknown): Cell {
  if (typeof value !== "string") {
    if (value !== null && typeof value === "object") return plainCell(value);
    return value === null || value === undefined ? null : JSON.stringify(value);
  }
  try {
    const parsed = JSON.parse(value) as Cell;
    return parsed !== null && typeof parsed === "object" ? parsed : value;
  } catch {
    return value;
  }
}

/** Anything a driver hands back that no engine-specific rule claimed. */
export function plainCell(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return floatCell(value);
  if (typeof value === "bigint") return integerCell(value);
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    return binaryCell(value);
  }
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? null : value.toISOString();
  }
  if (Array.isArray(value)) return value.map(plainCell);
  if (typeof value === "object") {
    const out: Record<string, Cell> = {};
    for (const [key, item] of Object.entries(value)) out[key] = plainCell(item);
    return out;
  }
  return String(value);
}
