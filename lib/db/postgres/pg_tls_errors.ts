/**
 * The errors dbport's own TLS fails a session with (pg_tls.ts and the
 * modules it reads with: pg_tls_plan.ts, pg_tls_files.ts): a TLS failure in
 * dbport's own words (code ETLS, or ETLSREFUSED when the server refused
 * TLS: connect errors), and the driver closed while a session's socket was
 * still opened (CONNECTION_ENDED).
 *
 * @module
 */

/** A TLS failure of dbport's own words (code ETLS: a connect error). */
export function tlsError(message: string, refused = false): Error {
  return Object.assign(
    new Error(refused ? `${message} (TLS refused)` : message),
    { code: refused ? "ETLSREFUSED" : "ETLS" },
  );
}

/** The driver closed while a session's socket was opened (`secured`). */
export function closedWhileOpening(): Error {
  return Object.assign(
    new Error("the connection was closed while its TLS was negotiated"),
    { code: "CONNECTION_ENDED" },
  );
}
