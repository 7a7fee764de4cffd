/**
 * The route a PostgreSQL driver's sessions take to its server, decided once
 * per driver (pg_pools.ts `PgPools`): the socket factory postgres.js is
 * given (a TCP socket, an SSH tunnel's channel, several hosts tried in turn:
 * pg_hosts.ts), dbport's own TLS over it (pg_tls.ts), the role check of a
 * target_session_attrs (pg_session_attrs.ts), and postgres.js's URL and
 * options to match; or null where postgres.js opens its sockets itself (a
 * Unix socket). A URL whose TLS parameters could not be honoured is refused
 * here, before anything connects.
 *
 * @module
 */

import { connect as tcpConnect } from "node:net";
import { connectReading } from "./pg_socket_reads.ts";
import postgres from "postgres";
import {
  CONNECT_TIMEOUT_SECONDS,
  type PostgresConfig,
  postgresOptions,
} from "./pg_options.ts";
import { sessionAttrs } from "./pg_session_attrs.ts";
import { toDbError } from "./pg_errors.ts";
import { urlForPostgresJs } from "../pg_url_params.ts";
import { urlQuery } from "../url_query.ts";
import { startupOptionsRefusal } from "../pg_settings.ts";
import { wireTarget } from "./pg_wired.ts";
import { HostPicker, severalHosts } from "./pg_hosts.ts";
import { checkedRole } from "./pg_startup.ts";
import { openingSafely, secured } from "./pg_tls.ts";
import {
  clientCertRefusal,
  tlsPlan,
  uncheckedCa,
  withoutOwnTlsParams,
} from "./pg_tls_plan.ts";
import type { Duplex } from "node:stream";

/** How one driver's sessions reach the server (`pgRoute`). */
export interface PgRoute {
  /** The driver's config, its target_session_attrs read out of the URL. */
  readonly config: PostgresConfig;
  /** Several hosts: the picker that tries them; null for one. */
  readonly picker: HostPicker | null;
  /**
   * The socket factory of the sessions (its bytes in clear unless
   * `opaque`); null where postgres.js opens its own (a Unix socket).
   */
  readonly open: (() => Promise<Duplex>) | null;
  /** Whether postgres.js negotiates TLS on the socket itself. */
  readonly opaque: boolean;
  /** postgres.js's URL (without the parameters dbport reads itself). */
  readonly url: string;
  /** postgres.js's options for a pool whose sockets `socket` opens. */
  readonly optionsOf: (
    socket?: () => Promise<Duplex>,
  ) => postgres.Options<Record<string, postgres.PostgresType>>;
}

/**
 * The route of the driver `given` configures; what dbport's TLS still
 * negotiates or reads ends with `stop` (the driver closing). Throws the
 * connect error of a URL whose TLS parameters cannot be used as given.
 */
export function pgRoute(given: PostgresConfig, stop: AbortSignal): PgRoute {
  // target_session_attrs is dbport's to read (pg_session_attrs.ts).
  const attrs = sessionAttrs(given.url);
  const config: PostgresConfig = {
    ...given,
    url: attrs.url,
    targetSessionAttrs: attrs.attrs,
  };
  const options = postgres(config.url, postgresOptions(config))
    .options as never;
  // A plain TCP socket, or the tunnel's: null for a Unix socket, which
  // postgres.js opens itself. Under TLS dbport negotiates on it itself
  // (pg_tls.ts) and gives postgres.js the clear side.
  const tlsNeeds = tlsPlan(config.url, options);
  // Several hosts: dbport tries them (pg_hosts.ts) and gives postgres.js
  // the first that connects as its only host — its own rotation ignores
  // every connect error while a next host exists, and never stops. TLS
  // there is still postgres.js's to negotiate, over that socket
  // (`tlsPlan`: undefined), whose bytes dbport then cannot read.
  const hosts = severalHosts(config.socket, options, config.url);
  const picker = hosts === null
    ? null
    : new HostPicker(hosts, attrs.hosts, tlsNeeds !== undefined);
  const target = tlsNeeds === undefined || picker !== null
    ? null
    : wireTarget(config.socket, options);
  // A tunnel's socket that cannot be opened fails as a socket, never as
  // a throw (pg_tls.ts `openingSafely`); so does a list of hosts none of
  // which connects.
  const raw = picker !== null
    ? openingSafely(picker.open)
    : target === null
    ? null
    : config.socket === undefined
    ? () =>
      Promise.resolve(
        // In clear, read into a buffer of the socket's own
        // (pg_socket_reads.ts); under TLS the TLS socket reads it.
        tlsNeeds === null
          ? connectReading(target.port, target.host)
          : tcpConnect(target.port, target.host).setNoDelay(true),
      )
    : openingSafely(config.socket);
  const ownTls = raw !== null && tlsNeeds !== null &&
    tlsNeeds !== undefined;
  const clear = raw === null || !ownTls ? raw : secured(raw, tlsNeeds!, stop);
  // One host and a target_session_attrs: checked on the clear bytes, so
  // that a server of the other role is named (pg_startup.ts `checkedRole`).
  const open = picker === null && clear !== null && attrs.attrs != null
    ? checkedRole(clear, attrs.attrs)
    : clear;
  // postgres.js negotiates TLS on the socket dbport gave it: its bytes
  // are not clear, and it replaces the socket's listeners with its TLS
  // socket's (connection.js `secure`): neither wired nor watched.
  const opaque = picker !== null && tlsNeeds === undefined;
  // postgres.js's URL: without what it would pass on as a startup
  // parameter, and told not to negotiate TLS on a socket that has it.
  // Where postgres.js would negotiate TLS itself, a CA the URL names
  // would go unchecked: refused (pg_tls_plan.ts `uncheckedCa`).
  // So would a client certificate (or TLS turned off under it): refused,
  // never a session without it (pg_tls_plan.ts `clientCertRefusal`).
  const unchecked = tlsNeeds === undefined ? uncheckedCa(config.url) : null;
  // Thrown as the connect errors they are (an Error of no kind was an
  // internal error to a client), redacted.
  if (unchecked !== null) throw toDbError(unchecked, config.secrets);
  const noCert = clientCertRefusal(config.url, ownTls);
  if (noCert !== null) throw toDbError(noCert, config.secrets);
  // The URL's `options` may set only what a statement may (pg_settings.ts).
  const startup = urlQuery(config.url).get("options");
  const switches = startup === null ? null : startupOptionsRefusal(startup);
  if (switches !== null) throw toDbError(switches, config.secrets);
  // Only what postgres.js reads as its own options: any other parameter
  // would reach the server as a start-up setting over dbport's
  // (pg_url_params.ts; outsider stop 56).
  const url = urlForPostgresJs(
    ownTls ? withoutOwnTlsParams(config.url) : config.url,
  );
  const optionsOf = (socket?: () => Promise<Duplex>) => ({
    ...postgresOptions(config, socket),
    ...(ownTls ? { ssl: false as const } : {}),
    // One host: postgres.js's error suppression needs a next one. (The
    // typings say string; postgres.js takes a list: pg_options.ts.)
    ...(picker === null ? {} : {
      host: [picker.first.host] as unknown as string,
      port: [picker.first.port] as unknown as number,
      // The picker bounds each host's connect and startup itself
      // (pg_hosts.ts `HostPicker#bound`), naming the hosts; postgres.js's
      // own timeout, which names none, is only a backstop behind it.
      connect_timeout: CONNECT_TIMEOUT_SECONDS + 1,
    }),
  });
  return { config, picker, open, opaque, url, optionsOf };
}
