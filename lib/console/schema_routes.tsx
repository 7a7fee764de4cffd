/**
 * The Schema page's routes (docs/console.md "Schema"): GETs over the
 * catalog, read with the connection's saved login through the driver's own
 * catalog calls (the ones `list_schemas`, `list_tables` and
 * `describe_table` make), each stopped after the query timeout.
 *
 * @module
 */

import { type Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import type { CallOptions } from "../db/types.ts";
import { ownerConnection, OwnerFailure } from "../features/owner_query.ts";
import { LIST_LIMIT } from "../features/discovery.ts";
import { messageOf } from "../base/message_of.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./guards.ts";
import type { ConsoleView } from "./view.tsx";
import {
  SchemaBrowser,
  SchemaFilters,
  type SchemaPlace,
  TableView,
} from "./pages/schema.tsx";

/** Tables on one page: `list_tables`' own default. */
export const SCHEMA_PAGE = LIST_LIMIT.fallback;

/** The Schema page. */
export function schemaRoutes(
  deps: ConsoleDeps,
  view: ConsoleView,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/schema", (c) => schemaPage(c, deps, view));

  app.get("/schema/table", (c) => tablePage(c, deps, view));

  return app;
}

/** `GET /schema`: a connection's schemas and a page of its tables. */
async function schemaPage(
  c: Context<ConsoleEnv>,
  deps: ConsoleDeps,
  view: ConsoleView,
): Promise<Response> {
  const { page, call } = helpersOf(deps, view);
  const all = deps.connections.all();
  const id = c.req.query("connection") ?? all[0]?.id ?? "";
  const q = c.req.query("q")?.slice(0, 200) ?? "";
  const afterName = c.req.query("after");
  const afterSchema = c.req.query("after_schema");
  const place: SchemaPlace = {
    connection: id,
    ...(q ? { q } : {}),
    ...(afterName !== undefined && afterSchema !== undefined
      ? { after: { schema: afterSchema, name: afterName } }
      : {}),
  };
  if (all.length === 0) {
    return page(
      c,
      "Schema",
      null,
      <p class="empty">No saved connection: add one on Connections.</p>,
    );
  }
  const head = (
    <SchemaFilters
      connections={all}
      place={{
        ...place,
        ...(c.req.query("schema") === undefined
          ? {}
          : { schema: c.req.query("schema")! }),
      }}
    />
  );
  try {
    const { driver } = ownerConnection(deps, id);
    const schemas = await driver.listSchemas(call(c));
    const schema = c.req.query("schema") ?? schemas.current ??
      schemas.schemas[0]?.name;
    if (schema !== undefined) place.schema = schema;
    const tables = schema === undefined ? null : await driver.listTables({
      ...call(c),
      schema,
      ...(q ? { pattern: q } : {}),
      ...(place.after ? { after: place.after } : {}),
      limit: SCHEMA_PAGE,
      rowCounts: true,
    });
    return page(
      c,
      "Schema",
      <SchemaFilters connections={all} place={place} />,
      <SchemaBrowser
        place={place}
        schemas={schemas}
        page={tables}
        pageSize={SCHEMA_PAGE}
      />,
    );
  } catch (error) {
    return page(c, "Schema", head, failed(error));
  }
}

/** `GET /schema/table`: one table or view, all its catalog says. */
async function tablePage(
  c: Context<ConsoleEnv>,
  deps: ConsoleDeps,
  view: ConsoleView,
): Promise<Response> {
  const { page, call } = helpersOf(deps, view);
  const id = c.req.query("connection") ?? "";
  const schema = c.req.query("schema");
  const name = c.req.query("table") ?? "";
  try {
    const { driver, connection } = ownerConnection(deps, id);
    const table = await driver.describeTable(name, {
      ...call(c),
      ...(schema === undefined ? {} : { schema }),
    });
    if (table === null) {
      throw new OwnerFailure(
        `No table or view ${JSON.stringify(name)} in ${
          JSON.stringify(schema ?? "")
        } of "${connection.name}"`,
      );
    }
    const listed = await driver.listTables({
      ...call(c),
      schema: table.schema,
      pattern: table.name,
      rowCounts: true,
      limit: 50,
    });
    const rowCount = listed.tables.find((t) => t.name === table.name)
      ?.rowCount;
    return page(
      c,
      table.name,
      null,
      <TableView
        connection={connection}
        table={table}
        rowCount={rowCount}
        csrf={c.get("session").csrf}
      />,
    );
  } catch (error) {
    return page(c, "Schema", null, failed(error));
  }
}

/** How the Schema page answers, and the options of its catalog calls. */
function helpersOf(deps: ConsoleDeps, view: ConsoleView) {
  const page = (
    c: Context<ConsoleEnv>,
    title: string,
    head: Child,
    body: Child,
  ) => view.page(c, { title, path: "/schema", head }, body);
  const call = (c: Context<ConsoleEnv>): CallOptions => ({
    signal: c.req.raw.signal,
    timeoutMs: deps.settings().queryTimeoutSeconds * 1000,
  });

  return { page, call };
}

/** A catalog call's failure, in the page. */
function failed(error: unknown) {
  return (
    <p class="notice outcome-error" id="schema-error" role="alert">
      {error instanceof OwnerFailure ? error.message : messageOf(error)}
    </p>
  );
}
