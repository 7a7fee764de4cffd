/**
 * The Connections page's forms beyond its policy choices (docs/console.md
 * "Connections"): add a connection (the engine inferred from its URL, the
 * password never shown back, SSH fields), Test one (each SSH hop, then the
 * server's version, or the error and what to fix), edit one, and remove one
 * — offering to drop the AI login `harden` made for it. Every form carries
 * the session's CSRF token; connections.json is changed under its lock, as
 * `connections add|set|remove` change it, and is in force at once.
 *
 * @module
 */

import { type Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { describeWhere, probeConnection } from "../app/connection_probe.ts";
import {
  AI_POLICIES,
  checkConnectionField,
  CONNECTION_DEFAULTS,
  editConnections,
  EXTERNAL_ACCESS,
  SAFE_MODES,
  type SavedConnection,
  WRITE_PREVIEWS,
  type WritePreviewMode,
} from "../app/connections.ts";
import { FieldError, SSH_FLAGS, sshFields } from "../app/ssh_fields.ts";
import { dropAiLogin } from "../app/harden_drop.ts";
import {
  ENGINE_NAMES,
  engineNamed,
  engineOfUrl,
  ENGINES,
} from "../db/engines.ts";
import { createNewSqliteFile } from "../app/sqlite_new_file.ts";
import { KNOWN_HOSTS_FILE } from "../base/identity.ts";
import { messageOf } from "../base/message_of.ts";
import { HttpError } from "../server/http_error.ts";
import type { ConsoleDeps } from "./deps.ts";
import type { ConsoleEnv } from "./guards.ts";
import { type ConsoleView, noSuchConnection } from "./view.tsx";
import { ConnectionsTable } from "./pages/connections.tsx";
import {
  keepsUrlSecret,
  maskUrlSecrets,
  restoreUrlSecrets,
  secretMoves,
} from "./url_secrets.ts";
import {
  type AddValues,
  EditForm,
  RemoveConfirm,
  type TestReport,
} from "./pages/connection_forms.tsx";
import { dirname, join } from "node:path";

/** What a form left for the Connections page to show. */
interface PageExtra {
  add?: { values: AddValues; error: string; report?: TestReport };
  report?: TestReport;
  notice?: string;
}

/**
 * The Connections page: its list (`GET /connections`), its forms, and the
 * policy choices (`POST /connections/:id`, after the routes it shares its
 * shape with).
 */
export function connectionRoutes(
  deps: ConsoleDeps,
  view: ConsoleView,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const kit = connectionsKit(deps, view);
  const { page, connectionsPage, known, test } = kit;

  app.get("/connections", (c) => connectionsPage(c, {}));

  app.post("/connections/add", (c) => addConnection(c, kit));

  app.post("/connections/:id/test", async (c) => {
    const report = await test(known(c.req.param("id")));
    return connectionsPage(c, { report });
  });

  app.get("/connections/:id/edit", (c) => {
    const connection = known(c.req.param("id"));
    return page(
      `Edit ${connection.name}`,
      <EditForm connection={connection} csrf={c.get("session").csrf} />,
    );
  });

  app.post(
    "/connections/:id/edit",
    (c) => editConnection(c, c.req.param("id"), kit),
  );

  app.post("/connections/:id/remove", (c) => {
    const connection = known(c.req.param("id"));
    return page(
      `Remove ${connection.name}`,
      <RemoveConfirm
        connection={connection}
        shared={shared(deps, connection)}
        csrf={c.get("session").csrf}
      />,
    );
  });

  app.post(
    "/connections/:id/remove/apply",
    (c) => removeConnection(c, c.req.param("id"), kit),
  );

  // Last: `/connections/add` and the others above share its shape.
  app.post(
    "/connections/:id",
    (c) => setPolicy(c, c.req.param("id"), kit),
  );

  return app;
}

/** What the Connections page's routes share. */
interface ConnectionsKit {
  deps: ConsoleDeps;
  /** A page of the Connections menu (a form's own page). */
  page(title: string, body: Child): Response;
  see(location: string): Response;
  /** The Connections page, with what a form left to show. */
  connectionsPage(c: Context<ConsoleEnv>, extra: PageExtra): Response;
  /** Change connections.json under its lock; in force at once. */
  save(change: (fresh: SavedConnection[]) => SavedConnection[]): Promise<void>;
  /** The saved connection `id`, or 404. */
  known(id: string): SavedConnection;
  /** Test it; the outcome is its state until it next answers. */
  test(connection: SavedConnection): Promise<TestReport>;
}

function connectionsKit(deps: ConsoleDeps, view: ConsoleView): ConnectionsKit {
  const page = (title: string, body: Child) =>
    view.whole({ title, path: "/connections" }, body);
  const see = view.see;
  const connectionsPage = (c: Context<ConsoleEnv>, extra: PageExtra) =>
    view.page(
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
        notice={extra.notice ?? view.notice(c)}
        {...(extra.add ? { add: extra.add } : {})}
        {...(extra.report ? { report: extra.report } : {})}
      />,
    );
  // dbport's own known_hosts, beside connections.json (as the CLI reads it).
  const knownHosts = () =>
    join(dirname(deps.connectionsPath), KNOWN_HOSTS_FILE);
  const save = (
    change: (fresh: SavedConnection[]) => SavedConnection[],
  ) =>
    editConnections(deps.connectionsPath, change, {
      saved: (text) =>
        deps.connections.apply(text, deps.connectionsPath, deps.log),
    }).then(() => deps.events.changed("connections"));
  const known = (id: string) => {
    const connection = deps.connections.byId(id);
    if (connection === undefined) {
      throw noSuchConnection();
    }
    return connection;
  };
  /** The test's outcome is the connection's state until it next answers. */
  const test = async (connection: SavedConnection): Promise<TestReport> => {
    const report = await probeConnection(connection, knownHosts());
    deps.pool.noteOutcome(
      connection.id,
      report.outcome === "failed" ? report.message : null,
    );
    return {
      name: connection.name,
      where: describeWhere(connection),
      ...report,
    };
  };

  return { deps, page, see, connectionsPage, save, known, test };
}

/**
 * The Add form's connection, each field checked (the test and the save
 * come after); or why not, with the values to show back.
 */
function addedConnection(
  form: Record<string, string>,
  deps: ConsoleDeps,
): { values: AddValues; connection?: SavedConnection; error?: string } {
  const values: AddValues = {
    name: (form.name ?? "").trim(),
    url: (form.url ?? "").trim(),
    engine: form.engine ?? "",
    ...Object.fromEntries(
      SSH_FLAGS.filter((flag) => flag !== "ssh-password").map((
        flag,
      ) => [flag, form[flag] ?? ""]),
    ),
  };
  const fail = (error: string) => ({ values, error });
  const engine = engineNamed(values.engine) ?? engineOfUrl(values.url);
  if (engine === null) {
    return fail(
      `The URL names no engine: choose one (${
        ENGINE_NAMES.join(", ")
      }) or write postgres://, mysql://, mariadb://, libsql://, a file path or file:`,
    );
  }
  for (const [key, value] of [["name", values.name], ["url", values.url]]) {
    const problem = checkConnectionField(key!, value, engine);
    if (problem !== null) return fail(`${key} ${problem}`);
  }
  if (
    deps.connections.all().some((other) =>
      other.name.toLowerCase() === values.name.toLowerCase()
    )
  ) {
    return fail(`A connection named "${values.name}" already exists`);
  }
  let ssh;
  try {
    // Only the fields given: blank ones are no flag at all.
    const flags = Object.fromEntries(
      SSH_FLAGS.flatMap((flag) => form[flag] ? [[flag, form[flag]]] : []),
    );
    ssh = sshFields("Add", flags, undefined).fields;
  } catch (error) {
    if (error instanceof FieldError) return fail(error.message);
    throw error;
  }
  const connection = {
    id: crypto.randomUUID(),
    ...CONNECTION_DEFAULTS,
    name: values.name,
    engine,
    url: values.url,
    ...(form.password ? { password: form.password } : {}),
    ...ssh,
  } as SavedConnection;
  return { values, connection };
}

/** `POST /connections/add`: tested, then saved (or refused, and why). */
async function addConnection(
  c: Context<ConsoleEnv>,
  kit: ConnectionsKit,
): Promise<Response> {
  const { deps, connectionsPage, save, test } = kit;
  const form = c.get("form");
  const { values, connection, error } = addedConnection(form, deps);
  const refuse = (error: string, report?: TestReport) =>
    connectionsPage(c, {
      add: { values, error, ...(report === undefined ? {} : { report }) },
    });
  if (connection === undefined) return refuse(error ?? "");
  const engine = connection.engine;
  // A new SQLite file (an absolute path in an existing directory) is made
  // empty before the test, as `connections add` does (sqlite_new_file.ts).
  const made = ENGINES[engine].filePaths
    ? await createNewSqliteFile(connection.url, connection.safeMode, {
      absoluteOnly: true,
    })
    : { kind: "none" as const };
  if (made.kind === "refused") return refuse(made.message);
  const report = await test({ ...connection });
  if (report.outcome === "failed" && form["save-anyway"] !== "1") {
    if (made.kind === "created") await made.undo();
    return refuse(
      `Not saved: it does not connect. Fix: ${report.fix}. Or tick "Save anyway".`,
      report,
    );
  }
  try {
    await save((fresh) => {
      if (
        fresh.some((other) =>
          other.name.toLowerCase() === connection.name.toLowerCase()
        )
      ) {
        throw HttpError.plain(
          409,
          "exists",
          `A connection named "${connection.name}" already exists`,
        );
      }
      return [...fresh, connection];
    });
  } catch (error) {
    if (made.kind === "created") await made.undo();
    throw error;
  }
  deps.pool.noteOutcome(
    connection.id,
    report.outcome === "failed" ? report.message : null,
  );
  deps.log(`dbport: console: added the connection "${connection.name}"`);
  return connectionsPage(c, {
    report,
    notice: report.outcome === "untrusted"
      ? `Saved "${connection.name}" with its SSH host key not trusted yet: check the key and trust it with: dbport connections trust-host "${connection.name}"`
      : made.kind === "created"
      ? `Created the empty SQLite database ${made.path} and saved "${connection.name}".`
      : `Saved "${connection.name}".`,
  });
}

/** `POST /connections/:id/remove/apply`: remove it, and its AI login if asked. */
async function removeConnection(
  c: Context<ConsoleEnv>,
  id: string,
  kit: ConnectionsKit,
): Promise<Response> {
  const { deps, known, save, see } = kit;
  const connection = known(id);
  const drop = c.get("form")["drop-ai-login"] === "1" &&
    connection.aiLogin !== undefined && !shared(deps, connection);
  if (drop) {
    const said: string[] = [];
    const failed = await dropAiLogin(connection, {
      out: (line: string) => said.push(line),
    });
    if (failed !== null) {
      throw HttpError.plain(
        409,
        "drop_failed",
        `Cannot drop the AI login "${
          connection.aiLogin!.user
        }": ${failed}. Nothing was removed; untick "drop" to keep the login.`,
      );
    }
  }
  await save((fresh) => fresh.filter((c) => c.id !== connection.id));
  deps.log(
    `dbport: console: removed the connection "${connection.name}"${
      drop ? " and dropped its AI login" : ""
    }`,
  );
  return see(`/connections?notice=${drop ? "removed-dropped" : "removed"}`);
}

/** `POST /connections/:id`: its externalAccess, aiPolicy and Safe Mode. */
async function setPolicy(
  c: Context<ConsoleEnv>,
  id: string,
  kit: ConnectionsKit,
): Promise<Response> {
  const { deps, save, see } = kit;
  const form = c.get("form");
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
  // another process saved a moment ago is kept; in force now, not at the
  // file watch's next look.
  let next: SavedConnection | undefined;
  await save((fresh) => {
    const current = fresh.find((connection) => connection.id === id);
    if (current === undefined) {
      throw noSuchConnection();
    }
    next = { ...current, ...policy };
    return fresh.map((connection) => connection.id === id ? next! : connection);
  }).catch((error) => {
    if (error instanceof HttpError) throw error;
    throw HttpError.plain(409, "unreadable", messageOf(error));
  });
  if (next === undefined) return see("/connections");
  deps.log(
    `dbport: console: "${next.name}" now externalAccess ${next.externalAccess}, aiPolicy ${next.aiPolicy}, safeMode ${next.safeMode}`,
  );
  return see("/connections?notice=saved");
}

/** `POST /connections/:id/edit`: its name, URL, password, SSH and preview. */
async function editConnection(
  c: Context<ConsoleEnv>,
  id: string,
  kit: ConnectionsKit,
): Promise<Response> {
  const { deps, page, see, save, known } = kit;
  const current = known(id);
  const form = c.get("form");
  const name = (form.name ?? current.name).trim();
  // The form shows the URL's password as a placeholder: kept unless changed.
  const url = restoreUrlSecrets(
    (form.url ?? current.url).trim(),
    current.url,
  );
  const refuse = (error: string) =>
    page(
      `Edit ${current.name}`,
      <EditForm
        connection={{ ...current, name, url }}
        csrf={c.get("session").csrf}
        error={error}
      />,
    );
  for (const [key, value] of [["name", name], ["url", url]]) {
    const problem = checkConnectionField(key!, value, current.engine);
    if (problem !== null) return refuse(`${key} ${problem}`);
  }
  const preview = form.writePreview ?? "";
  if (
    preview !== "" && !(WRITE_PREVIEWS as readonly string[]).includes(preview)
  ) {
    return refuse(`writePreview must be one of ${WRITE_PREVIEWS.join(", ")}`);
  }
  if (
    deps.connections.all().some((other) =>
      other.id !== id && other.name.toLowerCase() === name.toLowerCase()
    )
  ) {
    return refuse(`A connection named "${name}" already exists`);
  }
  let ssh: ReturnType<typeof sshFields>;
  try {
    const flags: Record<string, string | boolean> = Object.fromEntries(
      SSH_FLAGS.flatMap((flag) => form[flag] ? [[flag, form[flag]]] : []),
    );
    if (form["no-ssh"] === "1") flags["no-ssh"] = true;
    ssh = sshFields("Edit", flags, current);
  } catch (error) {
    if (error instanceof FieldError) return refuse(error.message);
    throw error;
  }
  const moved = keptSecretMoves(current, form, url, ssh);
  if (moved !== null) return refuse(`Not saved: ${moved}`);
  await save((fresh) =>
    fresh.map((connection) => {
      if (connection.id !== id) return connection;
      const next: SavedConnection = {
        ...connection,
        name,
        url,
        ...ssh.fields,
      };
      for (const key of ssh.remove) delete next[key];
      // The password: blank keeps it, the box clears it.
      if (form.password) next.password = form.password;
      if (form["clear-password"] === "1") delete next.password;
      if (preview !== "") {
        next.writePreview = preview as WritePreviewMode;
      }
      return next;
    })
  ).catch((error) => {
    throw HttpError.plain(409, "unreadable", messageOf(error));
  });
  deps.log(`dbport: console: edited the connection "${name}"`);
  return see("/connections?notice=saved");
}

/**
 * Why the edit would send a saved secret the owner did not type again to
 * another server or through another tunnel, or null: the URL's placeholder,
 * or a blank password box over a saved password, keeps a secret.
 */
function keptSecretMoves(
  current: SavedConnection,
  form: Record<string, string | undefined>,
  url: string,
  ssh: ReturnType<typeof sshFields>,
): string | null {
  const posted = (form.url ?? current.url).trim();
  const keepsPassword = current.password !== undefined && !form.password &&
    form["clear-password"] !== "1" && !ssh.remove.includes("password");
  const keepsUrl = keepsUrlSecret(posted) &&
    maskUrlSecrets(current.url) !== current.url;
  if (!keepsUrl && !keepsPassword) return null;
  const nextSsh = ssh.remove.includes("ssh")
    ? undefined
    : "ssh" in ssh.fields
    ? ssh.fields.ssh
    : current.ssh;
  return secretMoves(current, { url, ssh: nextSsh });
}

/** Another saved connection uses the same AI login: it stays then. */
function shared(deps: ConsoleDeps, connection: SavedConnection): boolean {
  const login = connection.aiLogin?.user;
  return login !== undefined &&
    deps.connections.all().some((c) =>
      c.id !== connection.id && c.aiLogin?.user === login
    );
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
