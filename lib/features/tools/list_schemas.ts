/**
 * `list_schemas`: the schemas (PostgreSQL), databases (MySQL/MariaDB) or
 * attached databases (SQLite) the login can see, with what each holds — the
 * first step on a database the model does not know.
 *
 * @module
 */

import * as s from "../../base/schema.ts";
import type { ToolEntry } from "../catalog.ts";
import type { FeatureDeps } from "../deps.ts";
import { admit, resolveConnection } from "./access.ts";
import { defineTool } from "./define.ts";
import {
  discoveryBudget,
  fitting,
  limitArgument,
  limitOf,
  LIST_LIMIT,
  schemasOf,
} from "./discovery.ts";
import { CONNECTION_ID } from "./shared.ts";

/** What `list_schemas` answers. */
const OUTPUT = s.object({
  schemas: s.array(s.object({
    name: s.string(),
    tables: s.integer({ minimum: 0 }),
    views: s.integer({ minimum: 0 }),
    is_default: s.boolean(),
  }, ["name", "tables", "views", "is_default"])),
  default_schema: s.nullable(s.string()),
  total: s.integer({ minimum: 0 }),
  is_truncated: s.boolean(),
}, ["schemas", "default_schema", "total", "is_truncated"]);

/** The `list_schemas` tool. */
export function listSchemasTool(deps: FeatureDeps): ToolEntry {
  return defineTool({
    name: "list_schemas",
    description:
      "Schemas (MySQL: databases; SQLite: attached databases) with table counts.",
    arguments: {
      properties: {
        connection_id: CONNECTION_ID,
        pattern: s.string({ description: "Part of the name, any case." }),
        limit: limitArgument(LIST_LIMIT),
      },
      required: ["connection_id"],
    },
    outputSchema: OUTPUT,
    annotations: {
      title: "List schemas",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    async run(args, ctx) {
      const limit = limitOf(args.limit, LIST_LIMIT);
      const resolved = resolveConnection(
        deps,
        ctx,
        args.connection_id,
      );
      await admit(deps, ctx, resolved.connection, null, "listing its schemas");
      const list = await schemasOf(deps, ctx, resolved);
      const pattern = args.pattern?.toLowerCase() ?? "";
      const matched = list.schemas.filter((entry) =>
        entry.name.toLowerCase().includes(pattern)
      );
      const entries = matched.slice(0, limit).map((entry) => ({
        name: entry.name,
        tables: entry.tables,
        views: entry.views,
        is_default: entry.name === list.current,
      }));
      const answer = {
        schemas: entries,
        default_schema: list.current,
        total: matched.length,
        is_truncated: false,
      };
      const kept = fitting(entries, discoveryBudget(deps, ctx), {
        ...answer,
        schemas: [],
      });
      return {
        ...answer,
        schemas: entries.slice(0, kept),
        is_truncated: kept < matched.length,
      };
    },
  });
}
