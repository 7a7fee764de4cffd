/**
 * The schema as prompts show it to a model: a header naming the connection
 * and its policy, a compact inventory of tables, and the full structure of
 * the tables that matter (columns, keys, indexes, DDL). Reads are bounded:
 * an inventory never lists more tables than asked, details never more.
 *
 * @module
 */

import { ENGINES } from "../../db/engines.ts";
import type { TableColumns, TableDetail } from "../../db/types.ts";
import type { CallContext } from "../context.ts";
import { catalogCall, type FeatureDeps } from "../deps.ts";
import type { Resolved } from "../tools/access.ts";
import { rethrow } from "../tools/failure.ts";

const SAFE_MODES = {
  silent: "writes run without asking (within the token's rights)",
  alert: "every write asks the user first",
  alertFull: "every statement, reads included, asks the user first",
  readOnly: "every write is refused",
} as const;

/** The header every prompt starts with. */
export async function header(
  deps: FeatureDeps,
  ctx: CallContext,
  { connection, driver, label }: Resolved,
): Promise<string> {
  const version = await driver.version(catalogCall(deps, ctx)).catch((error) =>
    rethrow(error, label)
  );
  return [
    `Connection: ${label} (id ${connection.id})`,
    `Engine: ${version} — write SQL in the ${
      ENGINES[driver.engine].label
    } dialect.`,
    // A read-only connection is read only, whatever its Safe Mode says
    // about writes it would never run.
    connection.externalAccess === "readWrite"
      ? `External access: read and write. Safe Mode: ${connection.safeMode} — ${
        SAFE_MODES[connection.safeMode]
      }.`
      : "External access: read only — this connection is read only for AI clients: every write is refused, so write only SELECT-style queries.",
    connection.externalAccess === "readWrite"
      ? "Run SQL with the execute_query tool; drops and truncates need confirm_destructive_operation and the user's approval."
      : "Run SQL with the execute_query tool.",
  ].map((line) => `- ${line}`).join("\n");
}

/** One line per table: `schema.name (type): col type, col type, …`. */
export function inventory(
  tables: readonly TableColumns[],
  total: number,
): string {
  if (total === 0) return "(no tables)";
  const lines = tables.map((table) => {
    const columns = table.columns.map((column) =>
      `${column.name} ${column.dataType}${column.primaryKey ? " PK" : ""}${
        column.private ? " PRIVATE" : ""
      }`
    );
    return `- ${table.schema}.${table.name}${
      table.type === "table" ? "" : ` (${table.type.replace("_", " ")})`
    }: ${columns.join(", ")}`;
  });
  if (total > tables.length) {
    lines.push(
      `- … and ${
        total - tables.length
      } more tables not listed (list_tables shows them all)`,
    );
  }
  return lines.join("\n");
}

/** Describe up to `max` tables (in order), skipping any that vanished. */
export async function details(
  deps: FeatureDeps,
  ctx: CallContext,
  { driver, label }: Resolved,
  tables: readonly { schema: string; name: string }[],
  max: number,
): Promise<TableDetail[]> {
  const found: TableDetail[] = [];
  for (const table of tables.slice(0, max)) {
    const detail = await driver.describeTable(table.name, {
      ...catalogCall(deps, ctx),
      schema: table.schema,
    }).catch((error) => rethrow(error, label));
    if (detail !== null) found.push(detail);
  }
  return found;
}

/** A table's full structure as markdown. */
export function structure(detail: TableDetail): string {
  const lines = [
    `### ${detail.schema}.${detail.name}${
      detail.type === "table" ? "" : ` (${detail.type.replace("_", " ")})`
    }`,
    "",
    "| column | type | null | default | key |",
    "|---|---|---|---|---|",
    ...detail.columns.map((column) =>
      `| ${cell(column.name)} | ${cell(column.dataType)} | ${
        column.nullable ? "yes" : "no"
      } | ${cell(column.defaultValue ?? "")} | ${
        [
          column.primaryKey ? "PK" : "",
          column.private ? "private: true (the database refuses it)" : "",
        ].filter((mark) => mark !== "").join(", ")
      } |`
    ),
  ];
  if (detail.foreignKeys.length > 0) {
    lines.push("", "Foreign keys:");
    for (const key of detail.foreignKeys) {
      lines.push(
        `- (${
          key.columns.join(", ")
        }) → ${key.referencedSchema}.${key.referencedTable}(${
          key.referencedColumns.join(", ")
        }) on delete ${key.onDelete.toLowerCase()}`,
      );
    }
  }
  const indexes = detail.indexes.filter((index) => !index.primary);
  if (indexes.length > 0) {
    lines.push("", "Indexes:");
    for (const index of indexes) {
      lines.push(
        `- ${index.name}${index.unique ? " (unique)" : ""}: ${
          index.columns.join(", ")
        }`,
      );
    }
  }
  if (detail.ddl !== null) {
    lines.push("", "```sql", detail.ddl, "```");
  }
  return lines.join("\n");
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s+/g, " ").slice(0, 200);
}

/** Text quoted into a prompt, cut at `limit` characters. */
export function quoted(text: string, limit: number): string {
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)}\n… [cut at ${limit} characters]`;
}

/**
 * Tables a text mentions by name (as a word, any case, singular or plural),
 * in the order of `tables`.
 */
export function mentioned<T extends { name: string }>(
  text: string,
  tables: readonly T[],
): T[] {
  const words = new Set(
    text.toLowerCase().split(/[^\p{L}\p{N}_$]+/u).filter((word) => word !== ""),
  );
  return tables.filter((table) => {
    const name = table.name.toLowerCase();
    return words.has(name) || words.has(`${name}s`) ||
      (name.endsWith("s") && words.has(name.slice(0, -1)));
  });
}
