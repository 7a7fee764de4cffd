/**
 * The Activity and History pages' routes (docs/console.md "Pages"): the
 * activity log and the query history, newest first, 200 a page, filtered
 * live; the history's export as CSV or JSON lines.
 *
 * @module
 */

import { Hono } from "hono";
import { type Outcome, OUTCOMES } from "../app/activity_log.ts";
import {
  HISTORY_CSV_HEADER,
  historyCsvLine,
  historyJsonLine,
} from "../app/history_export.ts";
import { HttpError } from "../server/http_error.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./guards.ts";
import type { ConsoleView } from "./view.tsx";
import {
  type ActivityFilter,
  ActivityFilters,
  ActivityTable,
} from "./pages/activity.tsx";
import {
  type HistoryFilter,
  HistorySearch,
  HistoryTable,
} from "./pages/history.tsx";

/** Rows a page shows; the export takes up to EXPORT_LIMIT. */
export const PAGE_ROWS = 200;
const EXPORT_LIMIT = 100_000;

/** The Activity and History pages, and the history's export. */
export function logRoutes(
  deps: ConsoleDeps,
  view: ConsoleView,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const base = deps.keys.prefix;
  const page = view.page;
  app.get("/activity", async (c) => {
    const filter: ActivityFilter = {};
    const client = c.req.query("client");
    const connection = c.req.query("connection");
    const outcome = c.req.query("outcome");
    if (client) filter.client = client;
    if (connection) filter.connection = connection;
    if (outcome && (OUTCOMES as readonly string[]).includes(outcome)) {
      filter.outcome = outcome;
    }
    const rows = await deps.activity.search({
      ...(filter.client === undefined ? {} : { clientName: filter.client }),
      ...(filter.connection === undefined
        ? {}
        : { connectionId: filter.connection }),
      ...(filter.outcome === undefined
        ? {}
        : { outcome: filter.outcome as Outcome }),
      ...beforeOf(c.req.query("before")),
      limit: PAGE_ROWS,
    });
    const head = c.req.query("fragment") === "1" ? null : (
      <ActivityFilters
        filter={filter}
        clients={await deps.activity.clientNames()}
        connections={deps.connections.all()}
      />
    );
    return page(
      c,
      { title: "Activity", path: "/activity", topic: "activity", head },
      <ActivityTable
        rows={rows}
        nameOf={nameOf(deps)}
        older={olderOf(c.req.url, rows, base)}
      />,
    );
  });

  app.get("/history", async (c) => {
    const filter = historyFilter(c.req.query("q"), c.req.query("connection"));
    const rows = await deps.history.search({
      ...searchOf(filter, PAGE_ROWS),
      ...beforeOf(c.req.query("before")),
    });
    const head = c.req.query("fragment") === "1" ? null : (
      <HistorySearch
        filter={filter}
        connections={deps.connections.all()}
        recording={deps.settings().queryHistory}
      />
    );
    return page(
      c,
      { title: "History", path: "/history", topic: "history", head },
      <HistoryTable
        rows={rows}
        nameOf={nameOf(deps)}
        older={olderOf(c.req.url, rows, base)}
      />,
    );
  });

  app.get("/history/export", async (c) => {
    const format = c.req.query("format");
    if (format !== "csv" && format !== "json") {
      throw HttpError.plain(
        400,
        "bad_format",
        'format must be "csv" or "json"',
      );
    }
    const filter = historyFilter(c.req.query("q"), c.req.query("connection"));
    const rows = await deps.history.search(searchOf(filter, EXPORT_LIMIT));
    const names = nameOf(deps);
    const lines = format === "csv"
      ? [HISTORY_CSV_HEADER, ...rows.map((row) => historyCsvLine(row, names))]
      : rows.map((row) => historyJsonLine(row, names));
    const stamp = new Date(deps.now()).toISOString().slice(0, 10);
    return new Response(lines.join("\r\n") + (lines.length ? "\r\n" : ""), {
      headers: {
        "content-type": format === "csv"
          ? "text/csv; charset=utf-8"
          : "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="dbport-history-${stamp}.${
          format === "csv" ? "csv" : "jsonl"
        }"`,
      },
    });
  });

  return app;
}

/** `?before=<id>`: the page of rows older than that one. */
function beforeOf(before: string | undefined): { beforeId?: number } {
  const id = Number(before);
  return before !== undefined && Number.isSafeInteger(id) && id > 0
    ? { beforeId: id }
    : {};
}

/** The next page's address: this one's, before its last row (a full page). */
function olderOf(
  url: string,
  rows: readonly { id: number }[],
  base: string,
): string | null {
  if (rows.length < PAGE_ROWS) return null;
  const next = new URL(url);
  next.searchParams.delete("fragment");
  next.searchParams.set("before", String(rows.at(-1)!.id));
  return `${
    next.pathname.startsWith(base) ? "" : base
  }${next.pathname}${next.search}`;
}

function historyFilter(
  q: string | undefined,
  connection: string | undefined,
): HistoryFilter {
  return {
    ...(q ? { q } : {}),
    ...(connection ? { connection } : {}),
  };
}

function searchOf(filter: HistoryFilter, limit: number) {
  return {
    ...(filter.connection === undefined
      ? {}
      : { connectionId: filter.connection }),
    ...(filter.q === undefined ? {} : { grep: filter.q }),
    limit,
  };
}

/** Connection names by id (an id no longer saved is shown as itself). */
function nameOf(deps: ConsoleDeps): (id: string) => string {
  const names = new Map(deps.connections.all().map((c) => [c.id, c.name]));
  return (id) => names.get(id) ?? id;
}
