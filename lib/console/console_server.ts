/**
 * The console's listener: a second 127.0.0.1 port with the same transport
 * limits as the MCP endpoint, its own secret key, and the approvals that
 * wait on it. The pages' code is loaded at the first request.
 *
 * @module
 */

import type { Dialog } from "../app/host_dialog.ts";
import { listen, type Listener } from "../server/listener.ts";
import type { ConsoleDeps } from "./deps.ts";
import { ConsoleEvents } from "./events.ts";
import { ConsoleKeys } from "./keys.ts";
import { type PendingApproval, PendingApprovals } from "./pending.ts";

/** What the console is started with. */
export interface ConsoleOptions {
  /** 0 for a free port. */
  port: number;
  /** The kept secret (secret.ts) its key and sessions derive from; a random one when not given. */
  secret?: string;
  idleTimeoutMs?: number;
  /**
   * Open an address in the user's browser (false when none could be); the
   * first approval that waits with no console page open calls it.
   */
  openBrowser(url: string): Promise<boolean>;
}

/** A running console. */
export interface RunningConsole {
  readonly port: number;
  /** `http://127.0.0.1:<port>/c/<prefix>/`, without the key. */
  readonly url: string;
  /** The key, derived from the kept secret (only in the 0600 handshake). */
  readonly key: string;
  /** The per-start path prefix every console URL sits under (`/c/...`). */
  readonly path: string;
  /** The address that opens a session: `url` with `?key=`. */
  readonly keyUrl: string;
  /** The host dialog that asks on the Approvals page. */
  readonly dialog: Dialog;
  readonly events: ConsoleEvents;
  readonly pending: PendingApprovals;
  /** End the pages' streams and waiting approvals, and close the port. */
  close(): Promise<void>;
}

type Shared = Omit<
  ConsoleDeps,
  "port" | "keys" | "pending" | "events" | "shutdown"
>;

/** Bind the console on 127.0.0.1. */
export async function startConsole(
  shared: Shared,
  options: ConsoleOptions,
): Promise<RunningConsole> {
  const keys = new ConsoleKeys(options.secret);
  const events = new ConsoleEvents();
  const shutdown = new AbortController();
  let port = 0;
  let url = "";
  let opened = false;
  const onAsk = (approval: PendingApproval) => {
    // Someone looking at the console sees it there; else say where it waits
    // and, the first time, open the console in the browser.
    if (events.listeners > 0) return;
    shared.log(
      `dbport: ${approval.request.message} It waits on the console: ${url} (deno task dbport console opens it)`,
    );
    if (opened) return;
    opened = true;
    options.openBrowser(`${url}?key=${keys.key}`).catch(() => false);
  };
  const pending = new PendingApprovals({
    onChange: () => events.changed("approvals"),
    onAsk,
    now: shared.now,
  });
  const deps: ConsoleDeps = {
    ...shared,
    port: () => port,
    keys,
    pending,
    events,
    shutdown: shutdown.signal,
  };
  let app: Promise<(request: Request) => Response | Promise<Response>> | null =
    null;
  const listener: Listener = await listen(async (request) => {
    app ??= import("./app.tsx").then((module) => {
      const built = module.createConsoleApp(deps);
      return (r: Request) => built.fetch(r);
    });
    return (await app)(request);
  }, {
    port: options.port,
    ...(options.idleTimeoutMs === undefined
      ? {}
      : { idleTimeoutMs: options.idleTimeoutMs }),
  });
  port = listener.port;
  url = `http://127.0.0.1:${port}${keys.prefix}/`;
  return {
    port,
    url,
    key: keys.key,
    path: keys.prefix,
    keyUrl: `${url}?key=${keys.key}`,
    dialog: pending.dialog,
    events,
    pending,
    async close() {
      shutdown.abort();
      pending.dismissAll();
      events.close();
      await listener.close();
    },
  };
}
