/**
 * The database tools.
 *
 * @module
 */

import type { ToolEntry } from "../catalog.ts";
import { confirmDestructiveTool } from "./confirm_destructive.ts";
import type { FeatureDeps } from "../deps.ts";
import { describeTableTool } from "./describe_table.ts";
import { executeQueryTool } from "./execute_query.ts";
import { exportQueryTool } from "./export_query.ts";
import { listConnectionsTool } from "./list_connections.ts";
import { explainQueryTool } from "./explain_query.ts";
import { listSchemasTool } from "./list_schemas.ts";
import { listTablesTool } from "./list_tables.ts";
import { searchSchemaTool } from "./search_schema.ts";

/** Every database tool over the server's connections and drivers. */
export function databaseTools(deps: FeatureDeps): ToolEntry[] {
  return [
    listConnectionsTool(deps),
    listSchemasTool(deps),
    listTablesTool(deps),
    searchSchemaTool(deps),
    describeTableTool(deps),
    explainQueryTool(deps),
    executeQueryTool(deps),
    exportQueryTool(deps),
    confirmDestructiveTool(deps),
  ];
}
