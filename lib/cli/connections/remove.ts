/**
 * `dbport connections remove NAME`: the saved connection gone, and the AI
 * login `harden` made for it dropped, kept or refused to guess about.
 *
 * @module
 */

import { editConnections } from "../../app/connections.ts";
import { parseFlags } from "../args.ts";
import { dropAiLogin } from "../../app/harden_drop.ts";
import { type CliIO, UsageError } from "../io.ts";
import { find, load } from "./common.ts";
import type { SecretInput } from "./input.ts";

export async function remove(
  path: string,
  args: string[],
  io: CliIO,
  input: SecretInput,
): Promise<number> {
  const parsed = parseFlags("connections remove", args, {
    "drop-ai-login": { type: "boolean" },
    "keep-ai-login": { type: "boolean" },
  });
  const connections = await load(path);
  const gone = find(connections, parsed.positionals[0], "connections remove");
  const login = gone.aiLogin?.user;
  // Another saved connection may use the same login: it stays then.
  const shared = login !== undefined &&
    connections.some((c) => c.id !== gone.id && c.aiLogin?.user === login);
  let dropped = false;
  if (
    login !== undefined && !shared && parsed.flags["keep-ai-login"] !== true
  ) {
    let drop = parsed.flags["drop-ai-login"] === true;
    if (!drop) {
      const answer = await input.confirm?.(
        `Drop the AI login ${
          JSON.stringify(login)
        } that harden made on the server of "${gone.name}"?`,
        true,
      ) ?? null;
      if (answer === null) {
        // No terminal to ask on and no word either way: once the connection
        // is gone dbport can no longer drop the login, so refuse, not guess.
        throw new UsageError(
          `connections remove: "${gone.name}" has the AI login ${
            JSON.stringify(login)
          } that harden made on its server. Nothing was removed: add --drop-ai-login to drop it too, or --keep-ai-login to leave it there.`,
        );
      }
      drop = answer;
    }
    if (drop) {
      io.out(`Dropping the AI login ${JSON.stringify(login)}:`);
      const failed = await dropAiLogin(gone, io);
      if (failed !== null) {
        io.err(
          `connections remove: cannot drop the AI login ${
            JSON.stringify(login)
          }: ${failed}. Nothing was removed; fix it, or keep the login with --keep-ai-login.`,
        );
        return 1;
      }
      dropped = true;
    }
  }
  await editConnections(path, (fresh) => fresh.filter((c) => c.id !== gone.id));
  io.out(`Removed connection "${gone.name}" (${gone.id})`);
  if (login !== undefined && !dropped) {
    io.out(
      shared
        ? `The AI login ${
          JSON.stringify(login)
        } stays on the server: another saved connection uses it.`
        : `The AI login ${
          JSON.stringify(login)
        } stays on the server (dbport no longer manages it: drop it there when it is no longer wanted).`,
    );
  }
  return 0;
}
