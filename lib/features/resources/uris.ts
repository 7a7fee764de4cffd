/**
 * The resource URIs under `dbport://connections` (the root lives in
 * `base/identity.ts`): parsing one into what it names, and building them.
 * Parsing returns a result; the caller turns a problem into `-32602`.
 *
 * - `dbport://connections`
 * - `dbport://connections/{connection_id}/schema{?schema}`
 * - `dbport://connections/{connection_id}/tables{?schema}`
 * - `dbport://connections/{connection_id}/tables/{table}{?schema}`
 * - `dbport://connections/{connection_id}/history{?limit}`
 *
 * The scheme and host compare case-insensitively, path segments are
 * percent-decoded (a table name with `/` is sent as `%2F`), a fragment is
 * ignored, and an unknown sub-resource or query parameter is a problem, never
 * a guess.
 *
 * @module
 */

import { isUuid } from "../../app/connections.ts";
import { RESOURCE_URI_ROOT } from "../../base/identity.ts";

/** What a resource URI names. */
export type ResourceRef =
  | { kind: "connections" }
  | { kind: "schema"; connectionId: string; schema?: string }
  | { kind: "tables"; connectionId: string; schema?: string }
  | { kind: "table"; connectionId: string; table: string; schema?: string }
  | { kind: "history"; connectionId: string; limit: number };

/** The outcome of {@linkcode parseResourceUri}. */
export type ParsedUri =
  | { ok: true; ref: ResourceRef }
  /** Not under our root at all: another provider's, or unknown. */
  | { ok: false; ours: false }
  | { ok: false; ours: true; problem: string };

/** `.../history` rows when no `limit` is given, and the most allowed. */
export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;

/** The list of connections. */
export const CONNECTIONS_URI = RESOURCE_URI_ROOT;

/** A connection's schema resource (the subscribable one). */
export function schemaUri(connectionId: string): string {
  return `${RESOURCE_URI_ROOT}/${connectionId}/schema`;
}

const ROOT = new URL(RESOURCE_URI_ROOT);

/** What the query of each kind may carry. */
const QUERY_KEYS: Readonly<Record<ResourceRef["kind"], readonly string[]>> = {
  connections: [],
  schema: ["schema"],
  tables: ["schema"],
  table: ["schema"],
  history: ["limit"],
};

/** Parse a resource URI. */
export function parseResourceUri(uri: string): ParsedUri {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return { ok: false, ours: false };
  }
  if (url.protocol.toLowerCase() !== ROOT.protocol) {
    return { ok: false, ours: false };
  }
  const problem = (text: string): ParsedUri => ({
    ok: false,
    ours: true,
    problem: text,
  });
  if (url.host.toLowerCase() !== ROOT.host || url.username || url.port) {
    return problem(`it is not under ${RESOURCE_URI_ROOT}`);
  }
  const raw = url.pathname.split("/").slice(1);
  if (raw.length > 0 && raw[raw.length - 1] === "") raw.pop(); // trailing "/"
  let segments: string[];
  try {
    segments = raw.map(decodeURIComponent);
  } catch {
    return problem("a path segment is not valid percent-encoding");
  }
  let ref = refOf(segments);
  if (typeof ref === "string") return problem(ref);
  const allowed = QUERY_KEYS[ref.kind];
  const seen = new Set<string>();
  for (const [key, value] of url.searchParams) {
    if (!allowed.includes(key)) {
      return problem(
        `the query parameter ${
          JSON.stringify(key)
        } is not one this resource takes${
          allowed.length === 0 ? "" : ` (it takes ${allowed.join(", ")})`
        }`,
      );
    }
    if (seen.has(key)) {
      return problem(`the query parameter "${key}" is repeated`);
    }
    seen.add(key);
    if (key === "schema") {
      if (value === "") return problem('"schema" must not be empty');
      if (
        ref.kind === "schema" || ref.kind === "tables" || ref.kind === "table"
      ) {
        ref = { ...ref, schema: value };
      }
    } else if (key === "limit") {
      if (!/^\d{1,6}$/.test(value)) {
        return problem(
          `"limit" must be an integer from 1 to ${HISTORY_MAX_LIMIT}, got ${
            JSON.stringify(value)
          }`,
        );
      }
      const limit = Number(value);
      if (limit < 1 || limit > HISTORY_MAX_LIMIT) {
        return problem(
          `"limit" must be from 1 to ${HISTORY_MAX_LIMIT}, got ${limit}`,
        );
      }
      if (ref.kind === "history") ref = { ...ref, limit };
    }
  }
  return { ok: true, ref };
}

/** The path's meaning, or why it has none. */
function refOf(segments: readonly string[]): ResourceRef | string {
  if (segments.length === 0) return { kind: "connections" };
  const id = segments[0]!;
  if (!isUuid(id)) {
    return `${
      JSON.stringify(id.slice(0, 80))
    } is not a connection id (a UUID from ${RESOURCE_URI_ROOT})`;
  }
  const connectionId = id.toLowerCase();
  const [, part, table, ...rest] = segments;
  const known =
    "schema, tables, tables/{table} or history (see resources/templates/list)";
  if (part === undefined) {
    return `a connection has no resource of its own; read one of its ${known}`;
  }
  if (rest.length > 0 || (table !== undefined && part !== "tables")) {
    return `there is no such resource of a connection; it has ${known}`;
  }
  switch (part) {
    case "schema":
      return { kind: "schema", connectionId };
    case "history":
      return { kind: "history", connectionId, limit: HISTORY_DEFAULT_LIMIT };
    case "tables":
      if (table === undefined) return { kind: "tables", connectionId };
      if (table.trim() === "") return "the table name must not be empty";
      return { kind: "table", connectionId, table };
    default:
      return `${
        JSON.stringify(part.slice(0, 80))
      } is not a resource of a connection; it has ${known}`;
  }
}
