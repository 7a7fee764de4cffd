/**
 * The TLS a PostgreSQL connection URL asks for, read from its query string
 * alone (no connection is made): the plan dbport's own TLS negotiates by
 * (pg_tls.ts `secured`) - the sslmode, whether the server's chain and host
 * name are checked, the CA file (`sslrootcert`) and the client certificate
 * (`sslcert`, `sslkey`, `sslpassword`) - the refusals of parameters that
 * cannot be honoured as given, and the URL without the parameters dbport
 * reads itself (never sent to the server).
 *
 * @module
 */

import { tlsError } from "./pg_tls_errors.ts";
import { urlQuery, withQuery } from "../url_query.ts";

/** How a connection's sessions negotiate TLS. */
export interface TlsPlan {
  /** The sslmode as postgres.js read it (for messages). */
  readonly mode: string;
  /** Whether the chain and the host name are checked. */
  readonly verify: boolean;
  /** Whether an 'N' answer goes on in clear (`prefer`). */
  readonly fallback: boolean;
  /** `sslnegotiation=direct`: TLS at once, without the SSLRequest. */
  readonly direct: boolean;
  /** The host name checked, and sent as SNI unless an IP address. */
  readonly host: string;
  /** The CA file `sslrootcert` names; undefined: the system's CAs. */
  readonly caFile?: string;
  /** The client certificate presented (`sslcert`, `sslkey`), if any. */
  readonly client?: ClientCertFiles;
}

/** A client certificate as the URL names it. */
export interface ClientCertFiles {
  /** `sslcert`: the PEM certificate (its chain may follow it). */
  readonly certFile: string;
  /** `sslkey`: its PEM private key. */
  readonly keyFile: string;
  /** `sslpassword`: the key's passphrase (a secret: never in a message). */
  readonly password?: string;
}

/**
 * The TLS a connection asks for: null for none (clear), undefined when
 * postgres.js must negotiate it itself (an `ssl` object, which dbport never
 * gives, or no single host).
 */
export function tlsPlan(
  url: string,
  options: { ssl?: unknown; sslnegotiation?: unknown; host?: string[] },
): TlsPlan | null | undefined {
  const rootCert = rootCertOf(url);
  const client = clientCertOf(url);
  // A CA named without an sslmode asks for a checked server, never clear
  // text (outsider stop 51: the password went to a hop that asked); an
  // explicit `sslmode=disable` is the owner's word. A client certificate
  // named without one asks for TLS (`require`: a certificate is presented
  // only under TLS, and libpq's `prefer` would go on in clear without it).
  const ssl = options.ssl ||
    (hasSslMode(url)
      ? false
      : rootCert !== undefined
      ? "verify-full"
      : client !== undefined
      ? "require"
      : false);
  if (!ssl) return null;
  if (typeof ssl !== "string" && ssl !== true) return undefined;
  const host = options.host?.length === 1 ? options.host[0] : undefined;
  if (host === undefined) return undefined;
  const mode = String(ssl);
  const direct = options.sslnegotiation === "direct";
  // A CA named is a CA to check against, whatever the mode.
  const verify = !["require", "allow", "prefer"].includes(mode) ||
    rootCert !== undefined;
  return {
    mode: rootCert === "system" ? "verify-full" : mode,
    verify,
    fallback: mode === "prefer" && !direct && !verify,
    direct,
    host,
    ...(rootCert === undefined || rootCert === "system"
      ? {}
      : { caFile: rootCert }),
    ...(client === undefined ? {} : { client }),
  };
}

/** The client certificate the URL names (both files), if any. */
function clientCertOf(url: string): ClientCertFiles | undefined {
  const params = urlQuery(url);
  const certFile = params.get("sslcert");
  const keyFile = params.get("sslkey");
  if (certFile === null || keyFile === null) return undefined;
  const password = params.get("sslpassword");
  return {
    certFile,
    keyFile,
    ...(password === null ? {} : { password }),
  };
}

/**
 * Why the URL's client certificate parameters (`sslcert`, `sslkey`,
 * `sslpassword`) cannot be used as they are, or null: one file named
 * without the other, a passphrase without a key, TLS turned off
 * (`sslmode=disable`), or TLS that postgres.js would negotiate itself
 * (`own` false: several hosts, a Unix socket), which would connect without
 * the certificate. Refused before anything connects, as `uncheckedCa`.
 */
export function clientCertRefusal(url: string, own: boolean): Error | null {
  const params = urlQuery(url);
  const cert = params.has("sslcert");
  const key = params.has("sslkey");
  if (!cert && !key) {
    return params.has("sslpassword")
      ? tlsError(
        // No "sslkey: …": redact.ts reads a secret parameter's name
        // followed by ':' as a value given, and garbled the message into
        // "no sslkey=[redacted] is the passphrase …".
        "the URL names sslpassword but no sslkey; sslpassword is the passphrase of the client key that sslkey names (with its certificate, sslcert): name both, or remove sslpassword",
      )
      : null;
  }
  if (!cert) {
    return tlsError(
      "the URL names a client key (sslkey) but no certificate: name the key's PEM certificate with sslcert too",
    );
  }
  if (!key) {
    return tlsError(
      "the URL names a client certificate (sslcert) but no key: name the certificate's PEM private key with sslkey too",
    );
  }
  if (params.get("sslmode") === "disable" || params.get("ssl") === "false") {
    return tlsError(
      "the URL names a client certificate (sslcert, sslkey) and turns TLS off (sslmode=disable): a certificate is presented only under TLS; remove one or the other",
    );
  }
  if (!own) {
    return tlsError(
      "a client certificate (sslcert, sslkey) is presented only on TLS dbport negotiates itself, which it does on a single host by TCP (not several hosts, not a Unix socket); name one host",
    );
  }
  return null;
}

/**
 * Whether the URL says an `sslmode` (or `ssl`) at all: an empty one
 * (`sslmode=`, a template filled with nothing) says none — postgres.js
 * reads it as no TLS, and with a CA named it sent the startup and the
 * password in clear (outsider stop 52).
 */
function hasSslMode(url: string): boolean {
  const params = urlQuery(url);
  return params.getAll("sslmode").some((value) => value !== "") ||
    params.getAll("ssl").some((value) => value !== "");
}

/**
 * Why a URL whose TLS postgres.js would negotiate itself (several hosts, a
 * Unix socket) cannot be opened: it names a CA (`sslrootcert`), which
 * postgres.js would never check (`require` checks nothing; it passed the
 * parameter to the server, after the startup) — and handed its own TLS
 * the CA, a refused certificate made it try the hosts again in a loop
 * that outlived the closed driver (outsider stop 51). Null otherwise.
 */
export function uncheckedCa(url: string): Error | null {
  if (rootCertOf(url) === undefined) return null;
  return tlsError(
    "TLS with a CA the URL names (sslrootcert) needs a single host (dbport checks the server's certificate against it only on one host); name one host",
  );
}

/** The URL's `sslrootcert`, if any. */
function rootCertOf(url: string): string | undefined {
  return urlQuery(url).get("sslrootcert") ?? undefined;
}

/** The URL parameters dbport's own TLS reads (never the server's). */
const OWN_TLS_PARAMS = ["sslrootcert", "sslcert", "sslkey", "sslpassword"];

/**
 * `url` without the parameters dbport's TLS reads and postgres.js would pass
 * to the server as startup parameters (`sslrootcert`, `sslcert`, `sslkey`,
 * `sslpassword` — a passphrase sent to the server in a startup message).
 */
export function withoutOwnTlsParams(url: string): string {
  const params = urlQuery(url);
  if (!OWN_TLS_PARAMS.some((name) => params.has(name))) return url;
  for (const name of OWN_TLS_PARAMS) params.delete(name);
  // The fragment goes too.
  return withQuery(url, params.toString(), false);
}
