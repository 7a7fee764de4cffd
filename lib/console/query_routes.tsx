/**
 * The Query page's routes (docs/console.md "Query"). Every statement is
 * posted with the session's CSRF token, never sent in a URL: `POST /query`
 * runs a read at once, or for a write shows its preview and keeps a plan
 * (this session's, used once, forgotten after PLAN_TTL_MS);
 * `POST /query/confirm` runs the plan's write held to that preview;
 * `POST /query/export` streams a read as CSV. A `GET /query` shows the form,
 * and `POST /query/open` opens it prefilled (the Schema page's "Query").
 *
 * @module
 */

import { type Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { quoteIdent } from "../db/sql/identifiers.ts";
import {
  classifyOwner,
  exportOwnerCsv,
  OwnerFailure,
  type OwnerStatement,
  previewOwnerWrite,
  runOwner,
} from "../features/owner_query.ts";
import {
  previewHeadline,
  previewJson,
  type WritePreview,
} from "../features/approval.ts";
import { HttpError } from "../server/http_error.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./guards.ts";
import { type ConsoleView, noSuchConnection } from "./view.tsx";
import { ShownPlans } from "./shown_plans.ts";
import {
  ConfirmWrite,
  type QueryConfirm,
  QueryForm,
  type QueryInput,
  ResultGrid,
} from "./pages/query.tsx";

/** How long a shown write may wait for its Confirm. */
export const QUERY_PLAN_TTL_MS = 10 * 60_000;
const MAX_PLANS = 16;

interface Plan {
  input: QueryInput;
  owned: OwnerStatement;
  preview: WritePreview | null;
}

/** The Query page. */
export function queryRoutes(
  deps: ConsoleDeps,
  view: ConsoleView,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const kit = queryKit(deps, view);
  const { show, taken, connections } = kit;

  app.get(
    "/query",
    (c) => {
      // ?connection=<id> picks it (links from Connections); never any SQL.
      const asked = deps.connections.byId(c.req.query("connection") ?? "");
      return show(c, {
        connection: asked?.id ?? connections()[0]?.id ?? "",
        sql: "",
      }, null);
    },
  );

  app.post("/query/open", (c) => {
    const form = c.get("form");
    const connection = deps.connections.byId(form.connection ?? "");
    if (connection === undefined) {
      throw noSuchConnection();
    }
    const table = form.table ?? "";
    if (table === "") {
      throw HttpError.plain(400, "bad_table", "table is required");
    }
    const name = form.schema
      ? `${quoteIdent(form.schema, connection.engine)}.${
        quoteIdent(table, connection.engine)
      }`
      : quoteIdent(table, connection.engine);
    return show(c, {
      connection: connection.id,
      sql: `SELECT * FROM ${name} LIMIT 100`,
    }, null);
  });

  app.post("/query", (c) => runQuery(c, kit));

  app.post("/query/cancel", (c) => {
    const plan = taken(c);
    return show(
      c,
      plan.input,
      <p class="notice">Cancelled: nothing was run.</p>,
    );
  });

  app.post("/query/confirm", (c) => confirmWrite(c, kit));

  app.post("/query/export", (c) => exportQuery(c, kit));

  return app;
}

/** What the Query page's routes share. */
type QueryKit = ReturnType<typeof queryKit>;

function queryKit(deps: ConsoleDeps, view: ConsoleView) {
  const plans = new ShownPlans<Plan>(
    QUERY_PLAN_TTL_MS,
    MAX_PLANS,
    () => deps.now(),
  );
  const connections = () => deps.connections.all();
  const show = (
    c: Context<ConsoleEnv>,
    input: QueryInput,
    below: Child,
  ) =>
    view.whole(
      { title: "Query", path: "/query" },
      <>
        {connections().length === 0
          ? (
            <p class="empty">
              No saved connection: add one on the Connections page.
            </p>
          )
          : (
            <QueryForm
              connections={connections()}
              input={input}
              csrf={c.get("session").csrf}
            />
          )}
        {below}
      </>,
    );
  const failed = (message: string) => (
    <p class="notice outcome-error" id="query-error" role="alert">
      {message}
    </p>
  );
  const classify = (input: QueryInput, signal: AbortSignal) =>
    classifyOwner(deps, input.connection, input.sql, signal);
  const inputOf = (c: Context<ConsoleEnv>): QueryInput => {
    const form = c.get("form");
    return {
      connection: form.connection ?? connections()[0]?.id ?? "",
      sql: form.sql ?? "",
    };
  };

  const taken = (c: Context<ConsoleEnv>): Plan => {
    const plan = plans.take(c.get("form").plan ?? "", c.get("session").id);
    if (plan === undefined) {
      throw HttpError.plain(
        409,
        "no_plan",
        "That write is not waiting (run, cancelled, expired or another page's): press Run again",
      );
    }
    return plan;
  };
  return { deps, plans, show, failed, classify, inputOf, taken, connections };
}

/** `POST /query`: a read runs; a write shows its preview and waits. */
async function runQuery(
  c: Context<ConsoleEnv>,
  kit: QueryKit,
): Promise<Response> {
  const { deps, plans, show, failed, classify, inputOf } = kit;
  const input = inputOf(c);
  const signal = c.req.raw.signal;
  try {
    const owned = await classify(input, signal);
    if (owned.confirm === null) {
      const result = await runOwner(deps, owned, { signal });
      await changed(deps);
      return show(
        c,
        input,
        <ResultGrid
          answer={result.answer}
          types={result.types}
          write={false}
        />,
      );
    }
    const preview = await previewOwnerWrite(deps, owned, signal);
    const id = plans.keep(c.get("session").id, { input, owned, preview });
    const confirm: QueryConfirm = {
      plan: id,
      why: owned.confirm,
      previewLine: preview === null
        ? "No preview: this connection's writePreview is off"
        : previewHeadline(preview),
      preview: preview === null ? undefined : previewJson(preview),
      statement: owned.statement.text,
    };
    return show(
      c,
      input,
      <ConfirmWrite
        confirm={confirm}
        input={input}
        connectionName={owned.resolved.connection.name}
        csrf={c.get("session").csrf}
      />,
    );
  } catch (error) {
    if (error instanceof OwnerFailure) {
      return show(c, input, failed(error.message));
    }
    throw error;
  }
}

/** `POST /query/confirm`: the shown write runs, held to its preview. */
async function confirmWrite(
  c: Context<ConsoleEnv>,
  kit: QueryKit,
): Promise<Response> {
  const { deps, show, failed, taken } = kit;
  const plan = taken(c);
  try {
    const result = await runOwner(deps, plan.owned, {
      signal: c.req.raw.signal,
      confirmedAt: deps.now(),
      preview: plan.preview,
    });
    deps.log(
      `dbport: console: you ran a ${plan.owned.statement.tier} on "${plan.owned.resolved.connection.name}"`,
    );
    await changed(deps);
    return show(
      c,
      plan.input,
      <ResultGrid
        answer={result.answer}
        types={result.types}
        write
        recorded={deps.settings().queryHistory}
      />,
    );
  } catch (error) {
    if (error instanceof OwnerFailure) {
      await changed(deps);
      return show(c, plan.input, failed(error.message));
    }
    throw error;
  }
}

/** `POST /query/export`: a read streamed as CSV. */
async function exportQuery(
  c: Context<ConsoleEnv>,
  kit: QueryKit,
): Promise<Response> {
  const { deps, show, failed, classify, inputOf } = kit;
  const input = inputOf(c);
  const signal = c.req.raw.signal;
  try {
    const owned = await classify(input, signal);
    const { file } = await exportOwnerCsv(deps, owned, signal);
    const stamp = new Date(deps.now()).toISOString().replace(/[-:]/g, "")
      .slice(0, 15);
    return new Response(file.readable, {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition":
          `attachment; filename="dbport-query-${stamp}Z.csv"`,
      },
    });
  } catch (error) {
    if (error instanceof OwnerFailure) {
      return show(c, input, failed(error.message));
    }
    throw error;
  }
}

/** The History page follows the statements the owner ran. */
async function changed(deps: ConsoleDeps): Promise<void> {
  await deps.history.flush();
  deps.events.changed("history");
}
