/**
 * PostgreSQL values in the text format, read exactly: the driver hands raw
 * bytes and each column's type decides the JSON cell (values.ts). Arrays are
 * parsed here rather than by postgres.js, which reads an unquoted `NULL`
 * element as the text "NULL" and a NULL boolean as false.
 *
 * @module
 */

import type { Cell } from "../types.ts";
import { binaryCell, floatCell, isoDateTime, jsonCell } from "../values.ts";

import type { Buffer } from "node:buffer";

/** Element types of PostgreSQL's built-in array types. */
const ARRAY_ELEMENTS: Readonly<Record<number, number>> = {
  1000: 16, // bool
  1001: 17, // bytea
  1005: 21, // int2
  1007: 23, // int4
  1016: 20, // int8
  1028: 26, // oid
  1021: 700, // float4
  1022: 701, // float8
  1231: 1700, // numeric
  1009: 25, // text
  1015: 1043, // varchar
  1014: 1042, // bpchar
  1003: 19, // name
  1182: 1082, // date
  1183: 1083, // time
  1270: 1266, // timetz
  1115: 1114, // timestamp
  1185: 1184, // timestamptz
  1187: 1186, // interval
  199: 114, // json
  3807: 3802, // jsonb
  2951: 2950, // uuid
  1041: 869, // inet
  651: 650, // cidr
  1020: 603, // box: its elements are separated by ';'
};

/** The element type of an array type; 25 (text) for one we do not know. */
export function arrayElement(type: number): number | undefined {
  return ARRAY_ELEMENTS[type];
}

/**
 * The types whose cell is not the server's text as it is, each with its
 * conversion. Every other type (int8, numeric, money, text, dates, times,
 * intervals, uuid, inet, ranges, enums, bit strings, geometric types) is
 * exactly as the server wrote it.
 */
const CONVERSIONS: Readonly<Record<number, (text: string) => Cell>> = {
  16: (text) => text === "t",
  21: Number,
  23: Number,
  26: Number,
  700: (text) => floatCell(Number(text)),
  701: (text) => floatCell(Number(text)),
  17: (text) => binaryCell(hexBytes(text)),
  114: jsonCell,
  3802: jsonCell,
  1114: (text) => isoDateTime(text, false),
  1184: (text) => isoDateTime(text, true),
};

/** Whether a column's cell is its text exactly, so it may be cut as bytes. */
export function isVerbatimText(type: number, isArray: boolean): boolean {
  return !isArray && ARRAY_ELEMENTS[type] === undefined &&
    CONVERSIONS[type] === undefined;
}

/** One value's text as a JSON cell, by its type. */
export function textCell(text: string, type: number): Cell {
  const convert = CONVERSIONS[type];
  return convert === undefined ? text : convert(text);
}

/** A raw value (bytes of the text format) as a JSON cell. */
export function rawCell(
  value: Uint8Array | null,
  type: number,
  isArray: boolean,
): Cell {
  if (value === null) return null;
  // Buffer's own UTF-8 slice: TextDecoder's checks per call were an eighth
  // of a 10,000-row read (bench W3 profile).
  return textValue((value as Buffer).toString("utf8"), type, isArray);
}

/**
 * The value `start` to `end` of `bytes` (text format) as its cell: what
 * {@linkcode rawCell} makes of it, without a view of its own.
 */
export function cellAt(
  bytes: Buffer,
  start: number,
  end: number,
  type: number,
  isArray: boolean,
): Cell {
  return textValue(bytes.toString("utf8", start, end), type, isArray);
}

/** A value's text as its cell: arrays parsed, other types converted. */
function textValue(text: string, type: number, isArray: boolean): Cell {
  const element = ARRAY_ELEMENTS[type];
  if (element !== undefined || isArray) {
    return parseArray(text, element ?? 25, type === 1020 ? ";" : ",");
  }
  return textCell(text, type);
}

/** `\x0a0b…` (bytea's hex output) as bytes; the escape format for old servers. */
export function hexBytes(text: string): Uint8Array {
  if (text.startsWith("\\x")) {
    const bytes = new Uint8Array((text.length - 2) / 2);
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = parseInt(text.substr(2 + i * 2, 2), 16);
    }
    return bytes;
  }
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\" && text[i + 1] === "\\") {
      out.push(92);
      i++;
    } else if (text[i] === "\\") {
      out.push(parseInt(text.substr(i + 1, 3), 8));
      i += 3;
    } else out.push(text.charCodeAt(i));
  }
  return new Uint8Array(out);
}

/**
 * An array literal (`{1,NULL,"a \"b\""}`, nested) as nested JSON arrays. An
 * unquoted NULL is SQL NULL; a quoted "NULL" is the text NULL. An array with
 * explicit bounds (`[0:1]={7,8}`) is given as its text.
 */
export function parseArray(
  text: string,
  element: number,
  delimiter = ",",
): Cell {
  // Explicit bounds (`[0:1]={7,8}`) have no JSON form: the text, exactly.
  if (text[0] === "[") return text;
  let i = 0;
  const read = (): Cell[] => {
    // text[i] === "{"
    i++;
    const items: Cell[] = [];
    if (text[i] === "}") {
      i++;
      return items;
    }
    while (i < text.length) {
      while (text[i] === " ") i++;
      if (text[i] === "{") {
        items.push(read());
      } else if (text[i] === '"') {
        i++;
        let value = "";
        while (i < text.length && text[i] !== '"') {
          if (text[i] === "\\") i++;
          value += text[i] ?? "";
          i++;
        }
        i++;
        items.push(textCell(value, element));
      } else {
        let value = "";
        while (
          i < text.length && text[i] !== delimiter && text[i] !== "}"
        ) {
          if (text[i] === "\\") i++;
          value += text[i] ?? "";
          i++;
        }
        value = value.trim();
        items.push(
          value.toUpperCase() === "NULL" ? null : textCell(value, element),
        );
      }
      while (text[i] === " ") i++;
      if (text[i] === delimiter) {
        i++;
        continue;
      }
      if (text[i] === "}") {
        i++;
        break;
      }
    }
    return items;
  };
  return text[i] === "{" ? read() : text;
}
