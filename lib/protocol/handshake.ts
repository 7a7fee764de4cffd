/**
 * The handshake file's shape: what the server writes after binding its port and
 * what the bridge reads to find it (docs/wire.md "The stdio bridge").
 *
 * @module
 */

import * as s from "../base/schema.ts";
import { isJsonObject } from "./jsonrpc.ts";

/** Version of the handshake format. */
export const HANDSHAKE_VERSION = 1;

/** The contents of `mcp-handshake.json`. */
export interface Handshake {
  version: typeof HANDSHAKE_VERSION;
  port: number;
  pid: number;
  instanceId: string;
  protocolVersion: string;
  startedAt: string;
  /** The bridge token (minted by the server at start); null until one exists. */
  token: string | null;
  /** When {@linkcode Handshake.token} expires (ISO 8601); null with no token. */
  expiresAt: string | null;
  /**
   * The browser console's port, per-start path prefix and secret key, when
   * it runs (`deno task dbport console` opens
   * `http://127.0.0.1:<port><path>/?key=<key>`).
   */
  console?: { port: number; path: string; key: string };
}

const when =
  (ok: (value: unknown) => boolean, problem: string): s.Check => (value) =>
    ok(value) ? null : problem;

/**
 * The handshake file, each field with the problem a reader is told. Fields
 * it does not declare are left alone (a newer server may add some).
 */
export const HANDSHAKE_SCHEMA = s.object({
  version: s.refine(
    s.literal(HANDSHAKE_VERSION),
    (value) =>
      value === HANDSHAKE_VERSION
        ? null
        : `the handshake version ${
          JSON.stringify(value)
        } is not ${HANDSHAKE_VERSION}`,
  ),
  port: s.refine(
    s.integer({ minimum: 1, maximum: 65535 }),
    when(validPort, "the handshake port is not 1-65535"),
  ),
  pid: s.refine(
    s.integer({ minimum: 1 }),
    when(
      (v) => typeof v === "number" && Number.isInteger(v) && v >= 1,
      "the handshake pid is not a process id",
    ),
  ),
  instanceId: s.refine(
    s.string(),
    when(
      (v) => typeof v === "string" && v !== "",
      "the handshake instanceId is missing",
    ),
  ),
  protocolVersion: s.refine(
    s.string(),
    when(
      (v) => typeof v === "string",
      "the handshake protocolVersion or startedAt is missing",
    ),
  ),
  startedAt: s.refine(
    s.string(),
    when(
      (v) => typeof v === "string",
      "the handshake protocolVersion or startedAt is missing",
    ),
  ),
  token: s.refine(
    s.nullable(s.string()),
    when(
      (v) => v === null || typeof v === "string",
      "the handshake token is not a string",
    ),
  ),
  expiresAt: s.refine(
    s.nullable(s.string()),
    when(
      (v) => v === null || typeof v === "string",
      "the handshake expiresAt is not a string",
    ),
  ),
  console: s.refine(
    s.object({ port: s.integer(), path: s.string(), key: s.string() }, [
      "port",
      "path",
      "key",
    ]),
    when(
      (v) =>
        isJsonObject(v) && validPort(v.port) && typeof v.key === "string" &&
        v.key !== "" && typeof v.path === "string" &&
        CONSOLE_PATH.test(v.path),
      "the handshake console is not {port, path, key}",
    ),
  ),
}, [
  "version",
  "port",
  "pid",
  "instanceId",
  "protocolVersion",
  "startedAt",
  "token",
  "expiresAt",
]);

// The file's type is the handshake's own: a field added to one and not the
// other fails `deno task check`.
const _sameFields: s.Same<Handshake, s.Infer<typeof HANDSHAKE_SCHEMA>> = true;

/** The outcome of {@linkcode parseHandshake}. */
export type HandshakeResult = { ok: true; handshake: Handshake } | {
  ok: false;
  problem: string;
};

/** Parse and check handshake text; never throws. */
export function parseHandshake(text: string): HandshakeResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "the handshake is not JSON" };
  }
  if (!isJsonObject(value)) {
    return { ok: false, problem: "the handshake is not a JSON object" };
  }
  const issue = s.firstFieldIssue(HANDSHAKE_SCHEMA, value);
  if (issue !== null) {
    return {
      ok: false,
      problem: issue.kind === "invalid"
        ? issue.problem
        : `the handshake ${issue.path.join(".")} is not valid`,
    };
  }
  // Every declared field passed its check: the schema's type is the
  // handshake's (checked above), whatever else the file holds.
  const handshake = value as unknown as Handshake;
  const {
    port,
    pid,
    instanceId,
    protocolVersion,
    startedAt,
    token,
    expiresAt,
  } = handshake;
  const browser = handshake.console;
  return {
    ok: true,
    handshake: {
      version: HANDSHAKE_VERSION,
      port,
      pid,
      instanceId,
      protocolVersion,
      startedAt,
      token: token ?? null,
      expiresAt: expiresAt ?? null,
      ...(browser === undefined ? {} : {
        console: {
          port: browser.port,
          path: browser.path,
          key: browser.key,
        },
      }),
    },
  };
}

/** The console's path prefix: `/c/` and letters or digits, nothing else. */
const CONSOLE_PATH = /^\/c\/[0-9A-Za-z]{1,64}$/;

/** The address that opens a console session (`key` swapped for a cookie). */
export function consoleKeyUrl(
  browser: { port: number; path: string; key: string },
): string {
  return `http://127.0.0.1:${browser.port}${browser.path}/?key=${browser.key}`;
}

function validPort(port: unknown): boolean {
  return typeof port === "number" && Number.isInteger(port) && port >= 1 &&
    port <= 65535;
}
