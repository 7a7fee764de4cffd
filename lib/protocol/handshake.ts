/**
 * The handshake file's shape: what the server writes after binding its port and
 * what the bridge reads to find it (docs/wire.md "The stdio bridge").
 *
 * @module
 */

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
  if (value.version !== HANDSHAKE_VERSION) {
    return {
      ok: false,
      problem: `the handshake version ${
        JSON.stringify(value.version)
      } is not ${HANDSHAKE_VERSION}`,
    };
  }
  const {
    port,
    pid,
    instanceId,
    protocolVersion,
    startedAt,
    token,
    expiresAt,
  } = value;
  if (
    typeof port !== "number" || !Number.isInteger(port) || port < 1 ||
    port > 65535
  ) {
    return { ok: false, problem: "the handshake port is not 1-65535" };
  }
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid < 1) {
    return { ok: false, problem: "the handshake pid is not a process id" };
  }
  if (typeof instanceId !== "string" || instanceId === "") {
    return { ok: false, problem: "the handshake instanceId is missing" };
  }
  if (typeof protocolVersion !== "string" || typeof startedAt !== "string") {
    return {
      ok: false,
      problem: "the handshake protocolVersion or startedAt is missing",
    };
  }
  if (token !== null && typeof token !== "string") {
    return { ok: false, problem: "the handshake token is not a string" };
  }
  if (expiresAt !== null && typeof expiresAt !== "string") {
    return { ok: false, problem: "the handshake expiresAt is not a string" };
  }
  const browser = value.console;
  if (
    browser !== undefined &&
    (!isJsonObject(browser) || !validPort(browser.port) ||
      typeof browser.key !== "string" || browser.key === "" ||
      typeof browser.path !== "string" || !CONSOLE_PATH.test(browser.path))
  ) {
    return {
      ok: false,
      problem: "the handshake console is not {port, path, key}",
    };
  }
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
          port: browser.port as number,
          path: browser.path as string,
          key: browser.key as string,
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
