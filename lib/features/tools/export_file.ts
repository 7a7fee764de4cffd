/**
 * The file an `export_query` writes: created new (never overwriting) in the
 * exports directory (`0700`), readable by the user alone (`0600`), named
 * with the time, the connection and a random part — a connection's name is
 * reduced to letters, digits, `-` and `_`, so no name reaches outside the
 * directory. Rows go in as CSV (RFC 4180, formula-like cells disarmed) or
 * JSON lines (one object per row, values as execute_query encodes them),
 * counted against the export limits as they are written.
 *
 * @module
 */

import { csvRecord } from "../../app/csv.ts";
import type { Cell } from "../../db/types.ts";

/** The formats `export_query` writes. */
export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type ExportFormat = typeof EXPORT_FORMATS[number];

/** Why an export stopped before its end. */
export class ExportLimit extends Error {}

/** A file name for an export: `20261125T153000Z-shop-1a2b3c4d.csv`. */
export function exportFileName(
  connectionName: string,
  format: ExportFormat,
  now = new Date(),
): string {
  const time = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
  const name = connectionName.normalize("NFKD").replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "").slice(0, 40) || "connection";
  const random = crypto.randomUUID().slice(0, 8);
  return `${time}-${name}-${random}.${format}`;
}

/** Make the exports directory (`0700` when dbport creates it). */
export async function ensureExportDirectory(dir: string): Promise<void> {
  try {
    const info = await Deno.lstat(dir);
    if (!info.isDirectory) {
      throw new Error(`${dir} is not a directory`);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    // mkdir's mode is masked by the umask.
    if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
  }
}

/** A cell as CSV field text. */
function csvValue(cell: Cell): string | number | boolean | null {
  return cell === null || typeof cell !== "object"
    ? cell
    : JSON.stringify(cell);
}

/** Column names made unique for JSON lines keys: `a`, `a_2`. */
function uniqueKeys(columns: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return columns.map((name) => {
    const count = (seen.get(name) ?? 0) + 1;
    seen.set(name, count);
    return count === 1 ? name : `${name}_${count}`;
  });
}

/** An export file's limits; `bytesSetting` names the byte limit's setting. */
export interface ExportLimits {
  rows: number;
  bytes: number;
  bytesSetting?: string;
}

/** Writes one export file, within its limits. */
export class ExportWriter {
  readonly #file: Deno.FsFile;
  readonly #format: ExportFormat;
  readonly #limits: ExportLimits;
  readonly #encoder = new TextEncoder();
  #keys: string[] | null = null;
  rows = 0;
  bytes = 0;
  columns: string[] = [];

  private constructor(
    file: Deno.FsFile,
    format: ExportFormat,
    limits: ExportLimits,
  ) {
    this.#file = file;
    this.#format = format;
    this.#limits = limits;
  }

  /** Create `path` (it must not exist) for the user alone. */
  static async create(
    path: string,
    format: ExportFormat,
    limits: ExportLimits,
  ): Promise<ExportWriter> {
    const file = await Deno.open(path, {
      write: true,
      createNew: true,
      mode: 0o600,
    });
    return new ExportWriter(file, format, limits);
  }

  /** Write a batch of rows (the first call writes the CSV header). */
  async write(columns: string[], rows: Cell[][]): Promise<void> {
    let text = "";
    if (this.#keys === null) {
      this.columns = columns;
      this.#keys = uniqueKeys(columns);
      if (this.#format === "csv") text += csvRecord(columns);
    }
    if (this.rows + rows.length > this.#limits.rows) {
      throw new ExportLimit(
        `the result has more than maxExportRows (${this.#limits.rows}) rows`,
      );
    }
    for (const row of rows) {
      if (this.#format === "csv") text += csvRecord(row.map(csvValue));
      else {
        const line: Record<string, Cell> = {};
        row.forEach((cell, i) => line[this.#keys![i]!] = cell);
        text += `${JSON.stringify(line)}\n`;
      }
    }
    const bytes = this.#encoder.encode(text);
    if (this.bytes + bytes.length > this.#limits.bytes) {
      throw new ExportLimit(
        `the file would grow past ${
          this.#limits.bytesSetting ??
            `maxExportBytes (${this.#limits.bytes} bytes)`
        }`,
      );
    }
    let written = 0;
    while (written < bytes.length) {
      written += await this.#file.write(bytes.subarray(written));
    }
    this.rows += rows.length;
    this.bytes += bytes.length;
  }

  close(): void {
    try {
      this.#file.close();
    } catch { /* closed already */ }
  }
}
