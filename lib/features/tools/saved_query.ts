/**
 * The user's saved queries as tools (docs/queries.md): `q_<name>` for each
 * query whose connection the caller may see, with a typed input schema from
 * its parameters. A call binds the arguments to the engine's placeholders
 * (never into the text) and runs through `execute_query`'s own path: the
 * statement vetted by the lexer, the engine's parser and its catalog, a
 * read in the engine's read-only mode, a write through the write gates and
 * the user's approval where their policy asks.
 *
 * `tools/list` changes as the user adds or removes queries, but the server
 * announces nothing (`tools.listChanged` is false in the wire contract):
 * clients see them at their next `tools/list`, at most `ttlMs` later.
 *
 * @module
 */

import {
  PARAM_TYPES,
  type ParamValue,
  type SavedQuery,
} from "../../app/queries.ts";
import { classify } from "../../db/sql/classifier.ts";
import { compileNamed, PlaceholderError } from "../../db/sql/placeholders.ts";
import type { Engine } from "../../db/engines.ts";
import type { ToolEntry } from "../catalog.ts";
import type { CallContext } from "../context.ts";
import { callSettings, type FeatureDeps } from "../deps.ts";
import { isVisible } from "./access.ts";
import type { ArgumentSpec } from "./arguments.ts";
import { defineTool } from "./define.ts";
import { invalidArgument } from "./failure.ts";
import { RESULT_SET_SCHEMA } from "./statement.ts";
import { vetStatement } from "./vet.ts";
import { runVetted } from "./every_row.ts";
import { RESULT_GRID_URI, withView } from "../ui/apps.ts";

/** The tool name of a saved query. */
export function savedToolName(query: SavedQuery): string {
  return `q_${query.name}`;
}

/** The tool argument a parameter is. */
function argumentOf(param: SavedQuery["params"][number]): ArgumentSpec {
  const type = PARAM_TYPES[param.type];
  const fallback = param.default === undefined
    ? {}
    : { default: param.default as never };
  return { type, ...fallback } as ArgumentSpec;
}

/**
 * Each saved query's tool, built once: tools/list and every `q_*` call ask
 * for all of them, and building one lexes its statement (up to 100 KB, tens
 * of milliseconds on the event loop). The store replaces its query objects
 * when the file changes, so an edited query is built again.
 */
const built = new WeakMap<
  SavedQuery,
  { deps: FeatureDeps; engine: Engine; tool: ToolEntry }
>();

/** The saved queries `ctx`'s caller may see, as tools. */
export function savedQueryTools(
  deps: FeatureDeps,
  ctx: CallContext,
): ToolEntry[] {
  const queries = deps.queries?.all() ?? [];
  const tools: ToolEntry[] = [];
  for (const query of queries) {
    const connection = deps.connections.byId(query.connectionId);
    // A query on a connection the caller may not see is not offered at all.
    if (connection === undefined || !isVisible(connection, ctx.principal)) {
      continue;
    }
    let entry = built.get(query);
    if (
      entry === undefined || entry.deps !== deps ||
      entry.engine !== connection.engine
    ) {
      entry = {
        deps,
        engine: connection.engine,
        // Its rows are a result like execute_query's: the same grid view.
        tool: withView(
          savedQueryTool(deps, query, connection.engine),
          RESULT_GRID_URI,
        ),
      };
      built.set(query, entry);
    }
    tools.push(entry.tool);
  }
  return tools;
}

/** One saved query's tool on its connection's engine. */
export function savedQueryTool(
  deps: FeatureDeps,
  query: SavedQuery,
  engine: Engine,
): ToolEntry {
  const properties: Record<string, ArgumentSpec> = {};
  for (const param of query.params) properties[param.name] = argumentOf(param);
  const required = query.params.filter((param) => param.default === undefined)
    .map((param) => param.name);
  const name = savedToolName(query);
  // What the lexer says of the statement; the real run asks the engine too.
  const lexed = classify(query.sql, engine);
  const reads = lexed.ok && lexed.tier === "read";
  return defineTool({
    name,
    description: query.description === ""
      ? `Saved query ${query.name}.`
      : query.description,
    arguments: { properties, required },
    outputSchema: RESULT_SET_SCHEMA,
    // A saved write is offered only to clients that may write (tools/list
    // hides a tool whose scope the caller lacks); a read the engine's
    // catalog makes a write is refused at run time all the same.
    ...(reads ? {} : { scope: "tools:write" as const }),
    annotations: {
      title: query.name,
      readOnlyHint: reads,
      destructiveHint: !reads,
      idempotentHint: reads,
      openWorldHint: true,
    },
    async run(args, ctx: CallContext) {
      let compiled;
      try {
        compiled = compileNamed(
          query.sql,
          engine,
          query.params.map((param) => param.name),
        );
      } catch (error) {
        if (!(error instanceof PlaceholderError)) throw error;
        throw invalidArgument(
          `the saved query "${query.name}" cannot run: ${error.message}; fix it with \`dbport queries edit ${query.name}\``,
        );
      }
      const given = args as Readonly<Record<string, ParamValue | undefined>>;
      const declared = (param: string) =>
        query.params.find((p) => p.name === param);
      // Own keys only: a parameter named `constructor` or `valueOf` left
      // out takes its default, never Object.prototype's function.
      const values = compiled.order.map((param) =>
        (Object.hasOwn(given, param) ? given[param] : undefined) ??
          declared(param)?.default ?? null
      );
      const settings = callSettings(deps, ctx);
      const timeoutSeconds = settings.queryTimeoutSeconds;
      ctx.progress(0, 1, "Checking the statement");
      const vetted = await vetStatement(deps, ctx, {
        connectionId: query.connectionId,
        query: compiled.sql,
        timeoutSeconds,
        operation: `the saved query ${name}`,
        readsOnly: false,
        params: values,
        planLimits: true,
        approximate: compiled.order.map((param) =>
          declared(param)?.type === "float"
        ),
      });
      return await runVetted(deps, ctx, vetted, {
        maxRows: Math.min(settings.defaultRowLimit, settings.maxRowLimit),
        timeoutSeconds,
        operation: `the saved query ${name}`,
      });
    },
  });
}
