/**
 * How every console route answers (docs/console.md "Pages"): a page in the
 * console's frame, or only its live part when the script asks
 * (`?fragment=1`); a 303 to the page after a form, so a reload never posts
 * again; the notice a redirect asked for (a fixed list, never free text).
 *
 * @module
 */

import type { Child } from "hono/jsx";
import { HttpError } from "../server/http_error.ts";
import type { ConsoleDeps } from "./deps.ts";
import { ConsoleBase, Layout } from "./pages/layout.tsx";
import type { ConsoleTopic } from "./topic.ts";

/** Notices a redirect may ask the next page to show (never free text). */
export const NOTICES: Readonly<Record<string, string>> = {
  approved: "Approved: the request goes on.",
  denied: "Denied: the request ends with denied.",
  gone:
    "That approval is no longer waiting (answered elsewhere, withdrawn by its client, or timed out).",
  saved: "Saved to connections.json: in force from the next call.",
  revoked: "Revoked: the token stops working now.",
  removed: "Removed: AI clients no longer see it.",
  "removed-dropped": "Removed, and its AI login dropped on the server.",
  hardened:
    "Hardened: every AI read on it now runs as its least-privilege login.",
};

/** A page's frame: its title, its place in the menu and what is around it. */
export interface Frame {
  title: string;
  path: string;
  /** The topic whose changes refresh the live part. */
  topic?: ConsoleTopic;
  /** Above the live part (filters, forms). */
  head?: Child;
  /** Below the live part (the Overview's charts). */
  after?: Child;
}

/** What a request asks of the page (only its query is read). */
interface Asked {
  req: { query(name: string): string | undefined };
}

/** The answers every page's routes give. */
export interface ConsoleView {
  /** The page, or only its live part when the script asks. */
  page(c: Asked, frame: Frame, live: Child): Response;
  /** The whole page, whatever was asked (a form's answer). */
  whole(frame: Frame, body: Child): Response;
  /** Only `node`, as HTML. */
  html(node: Child): Response;
  /** After a form: see the page at `location` (303). */
  see(location: string): Response;
  /** The notice `?notice=` asks for, if it is one of {@linkcode NOTICES}. */
  notice(c: Asked): string | undefined;
}

/** The view of the console at `deps.keys.prefix`. */
export function consoleView(deps: ConsoleDeps): ConsoleView {
  const base = deps.keys.prefix;
  const html = (node: Child) =>
    new Response(
      `<!doctype html>${
        String(<ConsoleBase.Provider value={base}>{node}</ConsoleBase.Provider>)
      }`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  const whole = (frame: Frame, body: Child) =>
    html(
      <Layout
        title={frame.title}
        path={frame.path}
        pending={deps.pending.size}
        head={frame.head ?? null}
        {...(frame.topic === undefined ? {} : { topic: frame.topic })}
        {...(frame.after === undefined ? {} : { after: frame.after })}
      >
        {body}
      </Layout>,
    );
  return {
    html,
    whole,
    page: (c, frame, live) =>
      c.req.query("fragment") === "1" ? html(<>{live}</>) : whole(frame, live),
    see: (location) =>
      new Response(null, {
        status: 303,
        headers: { location: base + location },
      }),
    notice: (c) => NOTICES[c.req.query("notice") ?? ""],
  };
}

/** The refusal of an id no saved connection has (404). */
export function noSuchConnection(): HttpError {
  return HttpError.plain(
    404,
    "no_connection",
    "No saved connection has this id",
  );
}
