/**
 * The frame of every console page: navigation, the live-update marker and
 * the page's live part (`#live`, which the script fetches again alone).
 *
 * @module
 */

import { type Child, createContext, useContext } from "hono/jsx";
import type { Topic } from "../events.ts";

/** The pages, in the navigation's order. */
export const PAGES = [
  { path: "/", title: "Overview" },
  { path: "/query", title: "Query" },
  { path: "/schema", title: "Schema" },
  { path: "/activity", title: "Activity" },
  { path: "/history", title: "History" },
  { path: "/queries", title: "Queries" },
  { path: "/connections", title: "Connections" },
  { path: "/tokens", title: "Tokens" },
] as const;

/**
 * The console's per-start path prefix (`/c/<random>`), which every link,
 * form action, asset and the event stream sit under; set by the app around
 * each render.
 */
export const ConsoleBase = createContext("");

/** A console path (`/tokens`) as a URL under this start's prefix. */
export function at(path: string): string {
  return `${useContext(ConsoleBase)}${path}`;
}

/** A whole page. */
export function Layout(props: {
  title: string;
  path: string;
  /** The topic whose changes refresh `#live`; none for a static page. */
  topic?: Topic;
  pending: number;
  /** Above the live part (filters, forms): never replaced while typed in. */
  head?: Child;
  /** Below the live part (the Overview's charts). */
  after?: Child;
  children: Child;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>
          {props.pending > 0 ? `(${props.pending}) ` : ""}
          {props.title} · dbport console
        </title>
        <link rel="stylesheet" href={at("/static/console.css")} />
        <link rel="icon" href={at("/static/icon.svg")} type="image/svg+xml" />
        <script src={at("/static/console.js")} defer />
      </head>
      <body data-topic={props.topic} data-base={at("")}>
        <header>
          <span class="brand">dbport</span>
          <nav>
            {PAGES.map((page) => (
              <a
                href={at(page.path)}
                aria-current={page.path === props.path ? "page" : undefined}
              >
                {page.title}
                {page.path === "/"
                  ? (
                    <>
                      {" "}
                      <span
                        id="pending-badge"
                        class="badge"
                        hidden={props.pending === 0}
                      >
                        {props.pending}
                      </span>
                    </>
                  )
                  : null}
              </a>
            ))}
          </nav>
          <span class="live">{props.topic ? "live" : ""}</span>
        </header>
        <main>
          <h1>{props.title}</h1>
          {props.head ?? null}
          <div id="live">{props.children}</div>
          {props.after ?? null}
        </main>
      </body>
    </html>
  );
}

/**
 * A labelled choice: `options` as values (shown as they are) or as
 * `[value, label]` pairs; `any` adds a first "any" entry with the value "".
 */
export function Choice(props: {
  label: string;
  name: string;
  options: readonly (string | readonly [string, string])[];
  current: string | undefined;
  any?: boolean;
}) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        {props.any ? <option value="">any</option> : null}
        {props.options.map((option) => {
          const [value, text] = typeof option === "string"
            ? [option, option]
            : option;
          return (
            <option value={value} selected={value === props.current}>
              {text}
            </option>
          );
        })}
      </select>
    </label>
  );
}

/** The hidden CSRF field every form carries. */
export function Csrf(props: { token: string }) {
  return <input type="hidden" name="csrf" value={props.token} />;
}

/**
 * A time: UTC in the markup (the page works without its script), which the
 * script rewrites to the browser's local time, keeping UTC in the title.
 */
export function Time(props: { ms: number | null }) {
  if (props.ms === null) return <>—</>;
  const utc = when(props.ms);
  return (
    <time datetime={new Date(props.ms).toISOString()} title={utc}>
      {utc}
    </time>
  );
}

/** A time as UTC, ISO-like, to the second (exports and titles). */
export function when(ms: number | null): string {
  if (ms === null) return "—";
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}
