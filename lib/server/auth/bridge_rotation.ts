/**
 * Keeps the bridge token fresh (docs/wire.md "The stdio bridge" 3): checks the clock
 * every few seconds, drops bridge tokens that have expired, and 15 minutes
 * before the current one expires mints the next and publishes it. The new
 * token is accepted before it is published, and the old one until it
 * expires, so a bridge never holds a token the server would refuse.
 *
 * @module
 */

import { messageOf } from "../../base/message_of.ts";
import type { Logger } from "../../base/log.ts";
import type { BridgeTokens, MintedBridgeToken } from "./bridge_tokens.ts";
import type { TokenVerifier } from "./verifier.ts";

/** How often the clock is checked. */
export const ROTATION_CHECK_MS = 10_000;

/** What rotation needs. */
export interface RotationDeps {
  tokens: BridgeTokens;
  verifier: TokenVerifier;
  /** Write the handshake naming this token. */
  publish: (token: MintedBridgeToken) => Promise<void>;
  log: Logger;
  checkMs?: number;
}

/** A running rotation. */
export interface Rotation {
  /** Rotate now if due (the timer calls this; tests may too). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/** Mint the first bridge token, publish it, and keep it fresh. */
export async function startBridgeRotation(
  deps: RotationDeps,
): Promise<Rotation> {
  const { tokens, verifier } = deps;
  const rotate = async () => {
    const minted = tokens.mint();
    verifier.setBridgeTokens(tokens.verifiers());
    await deps.publish(minted);
  };
  await rotate();

  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = async () => {
    if (tokens.prune()) verifier.setBridgeTokens(tokens.verifiers());
    if (tokens.dueForRotation()) await rotate();
  };
  const timer = setInterval(() => {
    running = running.then(tick).catch((error) =>
      deps.log(
        `dbport: could not rotate the bridge token: ${messageOf(error)}`,
      )
    );
  }, deps.checkMs ?? ROTATION_CHECK_MS);
  return {
    tick: () => {
      running = running.then(() => stopped ? undefined : tick());
      return running;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running.catch(() => {});
      tokens.clear();
      verifier.setBridgeTokens([]);
    },
  };
}
