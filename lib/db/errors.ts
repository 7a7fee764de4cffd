/**
 * The one error type drivers throw. Its message is already redacted: it may
 * reach a client.
 *
 * @module
 */

/** What went wrong, in terms the tools map to the contract's outcomes. */
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
  | "cancelled";

/** A driver failure with a redacted message. */
export class DbError extends Error {
  override name = "DbError";
  readonly kind: DbErrorKind;

  constructor(kind: DbErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}
