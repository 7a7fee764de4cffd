/**
 * The resource templates (RFC 6570) of `resources/templates/list`.
 *
 * @module
 */

import { RESOURCE_URI_ROOT } from "../../base/identity.ts";
import type { TemplateEntry } from "../catalog.ts";

const ROOT = RESOURCE_URI_ROOT;

/** Every template, in the order they are documented. */
export const RESOURCE_TEMPLATES: readonly TemplateEntry[] = [
  {
    definition: {
      uriTemplate: `${ROOT}/{connection_id}/schema{?schema}`,
      name: "connection_schema",
      title: "Connection schema",
      description:
        "The tables of one schema with their columns (name, type, nullability, primary key): without ?schema the login's default one (as list_tables). The first 100 tables within the discovery budget, with truncated and total_tables. Subscribable (a change in any schema).",
      mimeType: "application/json",
    },
  },
  {
    definition: {
      uriTemplate: `${ROOT}/{connection_id}/tables{?schema}`,
      name: "connection_tables",
      title: "Tables",
      description:
        "The tables, views and materialized views of a connection, optionally of one schema (as list_tables).",
      mimeType: "application/json",
    },
  },
  {
    definition: {
      uriTemplate: `${ROOT}/{connection_id}/tables/{table}{?schema}`,
      name: "table_description",
      title: "Table description",
      description:
        "One table's columns, indexes, foreign keys and DDL (as describe_table). Percent-encode a table name that contains /.",
      mimeType: "application/json",
    },
  },
  {
    definition: {
      uriTemplate: `${ROOT}/{connection_id}/history{?limit}`,
      name: "connection_history",
      title: "Query history",
      description:
        "The statements MCP clients ran on a connection, newest first: time, SQL, duration, rows, outcome and client. limit 1-500, default 50.",
      mimeType: "application/json",
    },
  },
];
