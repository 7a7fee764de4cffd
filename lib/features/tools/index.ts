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
import {
  PLAN_TREE_URI,
  RESULT_GRID_URI,
  TABLE_CARD_URI,
  withView,
} from "../ui/apps.ts";

/** Every database tool over the server's connections and drivers. */
export function databaseTools(deps: FeatureDeps): ToolEntry[] {
  return [
    listConnectionsTool(deps),
    listSchemasTool(deps),
    listTablesTool(deps),
    searchSchemaTool(deps),
    // MCP Apps views for a client that declared the extension (docs/apps.md).
    withView(describeTableTool(deps), TABLE_CARD_URI),
    withView(explainQueryTool(deps), PLAN_TREE_URI),
    withView(executeQueryTool(deps), RESULT_GRID_URI),
    exportQueryTool(deps),
    confirmDestructiveTool(deps),
  ];
}
