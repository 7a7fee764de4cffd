/**
 * The one error type drivers throw. Its message is already redacted: it may
 * reach a client.
 *
 * @module
 */

/** What went wrong, in terms the tools map to the wire reference's outcomes. */
export type DbErrorKind =
  /** The database could not be reached or refused the login. */
  | "connect"
  /** The database did not answer within the connect timeout. */
  | "connect_timeout"
  /** The statement failed (syntax, missing table, ...). */
  | "query"
  /** The engine refused a write in read-only mode. */
  | "read_only"
  /** The statement timeout ran out and the query was stopped. */
  | "timeout"
  /** The caller aborted and the query was stopped. */
  | "cancelled"
  /** The caller's request cannot be answered as asked (an ambiguous name). */
  | "ambiguous"
  /** The statement refuses a transaction, and a caller needed one. */
  | "no_transaction"
  /** A write changed other rows than the user approved: rolled back. */
  | "changed"
  /** The caller stopped a write before COMMIT on purpose (a dry run). */
  | "held"
  /** A tracked write whose effects the engine cannot count exactly: not run. */
  | "uncounted";

/** A table name found in more than one schema, when no schema was named. */
export function ambiguousTable(table: string, schemas: string[]): DbError {
  return new DbError(
    "ambiguous",
    `${JSON.stringify(table)} exists in ${schemas.length} schemas (${
      schemas.join(", ")
    }); name the one you mean with the schema argument`,
  );
}

/** A statement that cannot run inside a transaction, where one was needed. */
export function noTransaction(): DbError {
  return new DbError(
    "no_transaction",
    "the statement cannot run inside a transaction, so it cannot be tried and rolled back",
  );
}

/** A driver failure with a redacted message. */
export class DbError extends Error {
  override name = "DbError";
  readonly kind: DbErrorKind;

  constructor(kind: DbErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

/**
 * A failure that is Deno's permission system rather than the database: a
 * `deno run` with narrower flags than `deno task serve` gives. Said in
 * terms the user can act on, never Deno's raw text. Null for anything else.
 */
export function permissionProblem(error: unknown): DbError | null {
  const e = error as { code?: string; message?: string; name?: string };
  const message = e?.message ?? "";
  const net =
    /Requires net access|getaddrinfo EPERM|connect EPERM/.test(message) ||
    (e?.code === "EPERM" && /getaddrinfo|connect/.test(message));
  const other = error instanceof Deno.errors.NotCapable ||
    error instanceof Deno.errors.PermissionDenied ||
    /Requires (read|write|ffi|env|sys) access/.test(message);
  if (!net && !other) return null;
  const what = net
    ? "network access to this database's host"
    : `a permission (${
      /Requires (\w+) access/.exec(message)?.[1] ?? "read"
    } access)`;
  return new DbError(
    "connect",
    `dbport is running without ${what}; start it with "deno task serve", which allows every host a connection names (it still listens on 127.0.0.1 only)`,
  );
}

/** The message for a table that is not there, naming the schema if given. */
export function noSuchTable(
  table: string,
  schema: string | undefined,
  where: string,
): string {
  return `no table or view ${JSON.stringify(table)}${
    schema === undefined ? "" : ` in schema ${JSON.stringify(schema)}`
  } on ${where}`;
}
