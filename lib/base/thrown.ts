/**
 * What a driver threw, read field by field without trusting its type: the
 * drivers throw their own error classes, plain objects and, rarely, strings.
 *
 * @module
 */

/** The fields dbport reads of a driver's error. */
export interface Thrown {
  /** SQLSTATE, a driver code (`ECONNREFUSED`, `SQLITE_BUSY`) or "". */
  code: string;
  /** MySQL's numeric error code. */
  errno: number | undefined;
  /** The message, or the thrown value as text. */
  message: string;
  /** PostgreSQL's DETAIL and HINT, or "". */
  detail: string;
  hint: string;
  /** The error class's name (`AbortError`), or "". */
  name: string;
}

/** Read the fields of a thrown value. */
export function thrown(error: unknown): Thrown {
  const field = (key: string): unknown =>
    typeof error === "object" && error !== null
      ? Reflect.get(error, key)
      : undefined;
  const text = (key: string) => {
    const value = field(key);
    return typeof value === "string" ? value : "";
  };
  const errno = field("errno");
  const message = field("message");
  const name = field("name");
  return {
    code: text("code"),
    errno: typeof errno === "number" ? errno : undefined,
    message: typeof message === "string" ? message : String(error),
    detail: text("detail"),
    hint: text("hint"),
    name: typeof name === "string" ? name : "",
  };
}
