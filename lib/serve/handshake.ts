/**
 * Step 5 of a start: the handshake file the bridges read, rewritten with each
 * new bridge token.
 *
 * @module
 */

import { inspectHandshake, writeHandshake } from "../app/handshake_file.ts";
import type { Logger } from "../base/log.ts";
import { HANDSHAKE_VERSION } from "../protocol/handshake.ts";
import { MODERN_VERSION } from "../protocol/versions.ts";
import { BridgeTokens } from "../server/auth/bridge_tokens.ts";
import {
  type Rotation,
  startBridgeRotation,
} from "../server/auth/bridge_rotation.ts";
import type { Listener } from "../server/listener.ts";
import type { Core } from "./core.ts";
import type { StartOptions } from "./options.ts";
import type { Stores } from "./stores.ts";

/**
 * Step 5: the handshake, written with the first bridge token and rewritten
 * with each new one (docs/wire.md "The stdio bridge").
 */
export async function publishHandshake(
  options: StartOptions,
  stores: Stores,
  core: Core,
  listener: Listener,
  now: () => number,
  log: Logger,
): Promise<Rotation> {
  const { instanceId } = core.state;
  const previous = await inspectHandshake(stores.paths.handshake);
  if (previous.kind === "live") {
    log(
      `dbport: another dbport server (pid ${previous.pid}) also runs; bridges will now reach this one`,
    );
  }
  const startedAt = new Date(now()).toISOString();
  return await startBridgeRotation({
    tokens: new BridgeTokens(now),
    verifier: core.verifier,
    publish: (token) =>
      writeHandshake(stores.paths.handshake, {
        version: HANDSHAKE_VERSION,
        port: listener.port,
        pid: Deno.pid,
        instanceId,
        protocolVersion: MODERN_VERSION,
        startedAt,
        token: token.plaintext,
        expiresAt: new Date(token.expiresAt).toISOString(),
        ...(core.browser === null ? {} : {
          console: {
            port: core.browser.port,
            path: core.browser.path,
            key: core.browser.key,
          },
        }),
      }),
    log,
    ...(options.rotationCheckMs === undefined
      ? {}
      : { checkMs: options.rotationCheckMs }),
  });
}
