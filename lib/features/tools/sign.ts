/**
 * The signature of a client's statement (lib/db/signature.ts): who sent it
 * and a short call id, which the activity log entry of the call carries too.
 *
 * @module
 */

import { newCallId, type Signature } from "../../db/signature.ts";
import type { CallContext } from "../context.ts";

/** Sign a statement of this call; notes `call=<id>` in its activity log entry. */
export function signatureOf(ctx: CallContext): Signature {
  const call = newCallId();
  ctx.note?.(`call=${call}`);
  return {
    client: ctx.clientInfo?.name ?? "unknown",
    token: ctx.principal.kind === "anonymous"
      ? "anonymous"
      : ctx.principal.name,
    call,
  };
}
