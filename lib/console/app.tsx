/**
 * The console's Hono app: the policies (guards.ts) in front of its pages,
 * their live parts (`?fragment=1`), the forms that change something, the
 * history export and `/events` (docs/console.md).
 *
 * Loaded at the console's first request, not at `serve` start: an idle
 * server holds none of the pages' code (docs/performance.md "Memory").
 *
 * @module
 */

import { Hono } from "hono";
import type { Child } from "hono/jsx";
import {
  AI_POLICIES,
  editConnections,
  EXTERNAL_ACCESS,
  SAFE_MODES,
  type SavedConnection,
} from "../app/connections.ts";
import { messageOf } from "../base/message_of.ts";
import { parseDuration } from "../app/duration.ts";
import { isLevel } from "../app/tokens.ts";
import { allowedHostsGuard } from "../server/guards/host_guard.ts";
import { HttpError } from "../server/http_error.ts";
import { CONSOLE_CSS, CONSOLE_ICON, CONSOLE_JS } from "./assets.ts";
import type { ConsoleDeps } from "./deps.ts";
import { eventStream } from "./event_stream.ts";
import { hardenRoutes } from "./harden_routes.tsx";
import { logRoutes } from "./log_routes.tsx";
import type { ConsoleTopic } from "./topic.ts";
import { queryRoutes } from "./query_routes.tsx";
import {
  connectionRoutes,
  type ConnectionsPage,
} from "./connection_routes.tsx";
import { schemaRoutes } from "./schema_routes.tsx";
import {
  CONSOLE_HOSTS,
  type ConsoleEnv,
  keyExchange,
  requireSession,
  sameOriginWithToken,
  securityHeaders,
  underPrefix,
} from "./guards.ts";
import { ApprovalsList } from "./pages/approvals.tsx";
import { overview } from "./overview.tsx";
import { ConnectionsTable } from "./pages/connections.tsx";
import { QueriesTable } from "./pages/queries.tsx";
import { ConsoleBase, Layout } from "./pages/layout.tsx";
import { TOKEN_LIFETIMES, TokensPage } from "./pages/tokens.tsx";
import { tokenBudgetRoutes } from "./pages/tokens_budget.tsx";
import { loadBudgets } from "../app/token_budgets.ts";

/** Notices a redirect may ask the next page to show (never free text). */
const NOTICES: Readonly<Record<string, string>> = {
  approved: "Approved: the request goes on.",
  denied: "Denied: the request ends with denied.",
  gone:
    "That approval is no longer waiting (answered elsewhere, withdrawn by its client, or timed out).",
  saved: "Saved to connections.json: in force from the next call.",
  revoked: "Revoked: the token stops working now.",
  removed: "Removed: AI clients no longer see it.",
  "removed-dropped": "Removed, and its AI login dropped on the server.",
  hardened:
    "Hardened: every AI read on it now runs as its least-privilege login.",
};

/** Build the console app. */
export function createConsoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const base = deps.keys.prefix;
  const html = (node: Child) =>
    htmlResponse(
      <ConsoleBase.Provider value={base}>{node}</ConsoleBase.Provider>,
    );
  /** After a form: see the page (303, so a reload never posts again). */
  const see = (location: string) =>
    new Response(null, { status: 303, headers: { location: base + location } });
  app.onError((error) => {
    if (error instanceof HttpError) return error.toResponse();
    deps.log(
      `dbport: console: unexpected error: ${
        error instanceof Error ? error.stack : String(error)
      }`,
    );
    return HttpError.plain(500, "internal_error", "Internal error")
      .toResponse();
  });
  app.notFound(() =>
    HttpError.plain(404, "not_found", "Not found").toResponse()
  );
  app.use("*", securityHeaders());
  app.use("*", allowedHostsGuard(CONSOLE_HOSTS, deps.port));
  app.use("*", underPrefix(base));
  app.use("*", keyExchange(deps.keys, deps.port));
  app.use("*", requireSession(deps.keys, deps.port));
  app.use("*", sameOriginWithToken());

  app.get(
    `${base}/static/console.css`,
    (c) =>
      c.body(CONSOLE_CSS, 200, { "content-type": "text/css; charset=utf-8" }),
  );
  app.get(
    `${base}/static/icon.svg`,
    (c) => c.body(CONSOLE_ICON, 200, { "content-type": "image/svg+xml" }),
  );
  app.get(`${base}/static/console.js`, (c) =>
    c.body(CONSOLE_JS, 200, {
      "content-type": "text/javascript; charset=utf-8",
    }));
  app.get(
    `${base}/events`,
    (c) => eventStream(deps.events, c.req.raw.signal, deps.shutdown),
  );

  /** A page, or only its live part when the script asks (`?fragment=1`). */
  const page = (
    c: { req: { query(name: string): string | undefined } },
    frame: { title: string; path: string; topic?: ConsoleTopic; head?: Child },
    live: Child,
  ) => {
    if (c.req.query("fragment") === "1") return html(<>{live}</>);
    return html(
      <Layout
        title={frame.title}
        path={frame.path}
        pending={deps.pending.size}
        head={frame.head ?? null}
        {...(frame.topic === undefined ? {} : { topic: frame.topic })}
      >
        {live}
      </Layout>,
    );
  };

  app.get(`${base}/`, async (c) => {
    const approvals = (
      <ApprovalsList
        approvals={deps.pending.list()}
        csrf={c.get("session").csrf}
        timeoutMs={deps.settings().approvalTimeoutSeconds * 1000}
        notice={NOTICES[c.req.query("notice") ?? ""]}
      />
    );
    if (c.req.query("fragment") === "1") return html(approvals);
    return html(
      <Layout
        title="Overview"
        path="/"
        topic="approvals"
        pending={deps.pending.size}
        after={await overview(deps)}
      >
        {approvals}
      </Layout>,
    );
  });

  app.post(`${base}/approvals/:id`, (c) => {
    const decision = c.get("form").decision;
    if (decision !== "approve" && decision !== "deny") {
      throw HttpError.plain(
        400,
        "bad_decision",
        'decision must be "approve" or "deny"',
      );
    }
    const answered = deps.pending.answer(
      c.req.param("id"),
      decision === "approve",
    );
    return see(
      `/?notice=${
        answered ? (decision === "approve" ? "approved" : "denied") : "gone"
      }`,
    );
  });

  logRoutes(app, deps, base, page);

  const connectionsPage: ConnectionsPage = (c, extra) => {
    const notice = extra.notice ?? NOTICES[c.req.query("notice") ?? ""];
    return page(
      c,
      { title: "Connections", path: "/connections" },
      <ConnectionsTable
        connections={deps.connections.all()}
        status={(id) => ({
          connected: deps.pool.isConnected(id),
          failure: deps.pool.lastFailure(id),
          risks: deps.pool.risks(id),
        })}
        csrf={c.get("session").csrf}
        notice={notice}
        {...(extra.add ? { add: extra.add } : {})}
        {...(extra.report ? { report: extra.report } : {})}
      />,
    );
  };
  app.get(`${base}/connections`, (c) => connectionsPage(c, {}));
  connectionRoutes(
    app,
    deps,
    base,
    connectionsPage,
    (title, body) =>
      html(
        <Layout title={title} path="/connections" pending={deps.pending.size}>
          {body}
        </Layout>,
      ),
    see,
  );

  app.post(`${base}/connections/:id`, async (c) => {
    const form = c.get("form");
    const id = c.req.param("id");
    const policy = {
      externalAccess: pick(
        form.externalAccess,
        EXTERNAL_ACCESS,
        "externalAccess",
      ),
      aiPolicy: pick(form.aiPolicy, AI_POLICIES, "aiPolicy"),
      safeMode: pick(form.safeMode, SAFE_MODES, "safeMode"),
    };
    // The change is made to the file as it is under the lock, so an edit
    // another process saved a moment ago is kept.
    let next: SavedConnection | undefined;
    await editConnections(deps.connectionsPath, (fresh) => {
      const current = fresh.find((connection) => connection.id === id);
      if (current === undefined) {
        throw HttpError.plain(
          404,
          "no_connection",
          "No saved connection has this id",
        );
      }
      next = { ...current, ...policy };
      return fresh.map((connection) =>
        connection.id === id ? next! : connection
      );
    }, {
      // In force now, not at the file watch's next look: what was written,
      // taken in under the lock (never after another writer's text).
      saved: (text) =>
        deps.connections.apply(text, deps.connectionsPath, deps.log),
    }).catch((error) => {
      if (error instanceof HttpError) throw error;
      throw HttpError.plain(409, "unreadable", messageOf(error));
    });
    if (next === undefined) return see("/connections");
    deps.log(
      `dbport: console: "${next.name}" now externalAccess ${next.externalAccess}, aiPolicy ${next.aiPolicy}, safeMode ${next.safeMode}`,
    );
    deps.events.changed("connections");
    return see("/connections?notice=saved");
  });

  hardenRoutes(
    app,
    deps,
    base,
    (title, body) =>
      html(
        <Layout
          title={title}
          path="/connections"
          pending={deps.pending.size}
          head={null}
        >
          {body}
        </Layout>,
      ),
    see,
  );

  queryRoutes(
    app,
    deps,
    base,
    (title, path, body) =>
      html(
        <Layout title={title} path={path} pending={deps.pending.size}>
          {body}
        </Layout>,
      ),
  );

  schemaRoutes(
    app,
    deps,
    base,
    (c, title, path, head, body) =>
      c.req.query("fragment") === "1" ? html(<>{body}</>) : html(
        <Layout
          title={title}
          path={path}
          pending={deps.pending.size}
          head={head}
        >
          {body}
        </Layout>,
      ),
  );

  // Read per request from the server's store, which the queries.json watch
  // replaces: a `dbport queries add` shows at the next load.
  app.get(`${base}/queries`, (c) =>
    page(
      c,
      { title: "Queries", path: "/queries" },
      <QueriesTable
        queries={deps.queries.all()}
        connections={deps.connections.all()}
      />,
    ));

  app.get(`${base}/tokens`, async (c) => {
    const session = c.get("session");
    // The plaintext is shown once: taken from the session as it is shown.
    const created = session.flash;
    delete session.flash;
    return page(
      c,
      { title: "Tokens", path: "/tokens" },
      <TokensPage
        tokens={await deps.tokens.list()}
        connections={deps.connections.all()}
        csrf={session.csrf}
        now={deps.now()}
        created={created}
        notice={NOTICES[c.req.query("notice") ?? ""]}
        budgets={await loadBudgets(deps.tokens.db)}
      />,
    );
  });

  app.post(`${base}/tokens`, async (c) => {
    const form = c.get("form");
    const name = (form.name ?? "").trim();
    if (name === "" || name.length > 100) {
      throw HttpError.plain(
        400,
        "bad_name",
        "A token needs a name of 1 to 100 characters",
      );
    }
    const level = form.level ?? "";
    if (!isLevel(level)) {
      throw HttpError.plain(
        400,
        "bad_level",
        `level must be readOnly, readWrite or fullAccess, got ${
          JSON.stringify(level)
        }`,
      );
    }
    const expires = form.expires ?? "90d";
    const lifetime = parseDuration(expires);
    if (!TOKEN_LIFETIMES.includes(expires) || !lifetime.ok) {
      throw HttpError.plain(
        400,
        "bad_expiry",
        `expires must be one of ${TOKEN_LIFETIMES.join(", ")}`,
      );
    }
    const known = new Set(deps.connections.all().map((c) => c.id));
    const chosen = (form.connections ?? "").split(",").filter((id) =>
      id !== ""
    );
    for (const id of chosen) {
      if (!known.has(id)) {
        throw HttpError.plain(
          400,
          "bad_connection",
          "A chosen connection is not saved",
        );
      }
    }
    const now = deps.now();
    const { token, plaintext } = await deps.tokens.create({
      name,
      level,
      connections: chosen.length === 0 ? null : chosen,
      expiresAt: lifetime.ms === null ? null : now + lifetime.ms,
    }, now);
    // The server knows it at once, not at the next poll.
    await deps.tokensChanged();
    c.get("session").flash = { name: token.name, plaintext };
    deps.log(
      `dbport: console: created the token "${token.name}" (${token.level})`,
    );
    return see("/tokens");
  });

  app.post(`${base}/tokens/:id/revoke`, async (c) => {
    const id = c.req.param("id");
    const found = (await deps.tokens.list()).find((token) => token.id === id);
    if (found === undefined) {
      throw HttpError.plain(404, "no_token", "No token has this id");
    }
    await deps.tokens.revoke(id, deps.now());
    await deps.tokensChanged();
    deps.log(`dbport: console: revoked the token "${found.name}"`);
    return see("/tokens?notice=revoked");
  });
  tokenBudgetRoutes(app, deps, base, see);

  return app;
}

function htmlResponse(node: Child): Response {
  return new Response(`<!doctype html>${String(node)}`, {
    headers: { "content-type": "text/html; charset=utf-8" },
  });
}

/** A form field that must be one of `values`. */
function pick<T extends string>(
  value: string | undefined,
  values: readonly T[],
  field: string,
): T {
  if (value !== undefined && (values as readonly string[]).includes(value)) {
    return value as T;
  }
  throw HttpError.plain(
    400,
    "bad_field",
    `${field} must be one of ${values.join(", ")}, got ${
      JSON.stringify(value ?? null)
    }`,
  );
}
