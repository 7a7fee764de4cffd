/**
 * A start-up failure as one sentence: what went wrong and what to do about
 * it, never a raw driver error (`serve` prints it and exits 1).
 *
 * @module
 */

import { thrown } from "../base/thrown.ts";
import { messageOf } from "../base/message_of.ts";
import { HOME_ENV } from "../base/identity.ts";

/** What `serve` was doing when it failed. */
export interface StartupContext {
  home: string;
  /** The port the settings asked for (0: any). */
  port?: number;
}

/** The sentence for `error`, which stopped `serve` from starting. */
export function explainStartup(
  error: unknown,
  context: StartupContext,
): string {
  const message = messageOf(error);
  const { code } = thrown(error);
  if (
    error instanceof Deno.errors.PermissionDenied ||
    error instanceof Deno.errors.NotADirectory ||
    error instanceof Deno.errors.AlreadyExists ||
    /EACCES|EROFS|ENOTDIR|EEXIST/.test(code)
  ) {
    return `cannot create or write the app directory ${context.home} (${message}); make it writable, or set ${HOME_ENV} to a directory you can write`;
  }
  if (
    code === "EADDRINUSE" || /EADDRINUSE|address already in use/i.test(message)
  ) {
    return `port ${
      context.port ?? "?"
    } on 127.0.0.1 is already in use (another dbport, or another program); stop it, or set "port" in settings.json to 0 to let the system choose`;
  }
  if (
    /SQLITE_(NOTADB|CORRUPT)|file is not a database|malformed/i.test(
      `${code} ${message}`,
    )
  ) {
    return `the state database in ${context.home} is damaged (${message}); move state.db aside (tokens and the activity log start afresh) and run serve again`;
  }
  if (/SQLITE_(CANTOPEN|READONLY|IOERR)/.test(code)) {
    return `cannot open the state database in ${context.home} (${message}); check that the directory and state.db are writable by you`;
  }
  return message;
}
