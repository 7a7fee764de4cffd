/**
 * The console's policies, each a small middleware (docs/console.md
 * "Security"): headers that keep the page to itself, the loopback Host
 * (DNS rebinding, {@linkcode CONSOLE_HOSTS}), the key exchanged for a session cookie, the cookie
 * on every request, and a same-origin `Origin` plus the session's CSRF token
 * on every request that changes something.
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie, setCookie } from "hono/cookie";
import { secureHeaders } from "hono/secure-headers";
import type { AllowedHosts } from "../server/guards/host_guard.ts";
import { HttpError } from "../server/http_error.ts";
import type { ConsoleKeys, ConsoleSession } from "./keys.ts";
import { sameSecret } from "./keys.ts";

/** The console app's environment. */
export type ConsoleEnv = {
  Variables: { session: ConsoleSession; form: Record<string, string> };
};

/**
 * No script, style or image but the console's own, no inline script, no
 * framing, forms only to itself, nothing fetched from anywhere else.
 */
const CSP_DIRECTIVES = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
};

/** {@linkcode CSP_DIRECTIVES} as the header says them. */
export const CONTENT_SECURITY_POLICY = Object.entries(CSP_DIRECTIVES)
  .map(([name, values]) =>
    `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${
      values.join(" ")
    }`
  ).join("; ");

/** The most bytes a form the console posts may have. */
export const MAX_FORM_BYTES = 64 * 1024;

/** The cookie's name: one per port, so two servers' consoles never mix. */
export function cookieName(port: number): string {
  return `dbport_console_${port}`;
}

/**
 * Headers on every answer, refusals included: Hono's secure headers, only
 * the ones below, and `Cache-Control: no-store`.
 */
export function securityHeaders(): MiddlewareHandler {
  const secure = secureHeaders({
    contentSecurityPolicy: CSP_DIRECTIVES,
    xContentTypeOptions: true,
    // not no-referrer: under it Chromium sends `Origin: null` with a form.
    referrerPolicy: "same-origin",
    xFrameOptions: "DENY",
    crossOriginOpenerPolicy: "same-origin",
    crossOriginResourcePolicy: "same-origin",
    // Not these: HSTS means nothing on http://127.0.0.1, and the rest are
    // old browsers' or not the console's.
    crossOriginEmbedderPolicy: false,
    originAgentCluster: false,
    strictTransportSecurity: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  });
  return async function securityHeaders(c, next) {
    await secure(c, async () => {
      await next();
      c.res.headers.set("cache-control", "no-store");
    });
  };
}

/**
 * The console's own addresses: 127.0.0.1 and localhost, always with its
 * port, for the one host guard (lib/server/guards/host_guard.ts). A page
 * of another site whose name was made to resolve to 127.0.0.1 (DNS
 * rebinding) still sends its own name, and is refused before anything is
 * read.
 */
export const CONSOLE_HOSTS: AllowedHosts = {
  names: ["127.0.0.1", "localhost"],
  portOptional: false,
};

/**
 * Every URL sits under the per-start prefix (`/c/<random>`); anything else
 * is a bare 404 that names nothing, before a key or a cookie is looked at.
 */
export function underPrefix(prefix: string): MiddlewareHandler {
  return async function underPrefix(c, next) {
    if (!c.req.path.startsWith(`${prefix}/`)) {
      throw HttpError.plain(404, "not_found", "Not found");
    }
    await next();
  };
}

/**
 * `?key=…` on a GET: the right key opens a session (an `HttpOnly`,
 * `SameSite=Strict` cookie whose `Path` is the console's prefix) and
 * redirects to the same page without the key; a wrong one is refused.
 */
export function keyExchange(
  keys: ConsoleKeys,
  port: () => number,
): MiddlewareHandler {
  return async function keyExchange(c, next) {
    const given = c.req.query("key");
    if (given === undefined || c.req.method !== "GET") return await next();
    const session = keys.exchange(given, port());
    if (session === null) throw refusal("the key is not this console's");
    const url = new URL(c.req.url);
    url.searchParams.delete("key");
    setCookie(c, cookieName(port()), session.id, {
      path: keys.prefix,
      httpOnly: true,
      sameSite: "Strict",
    });
    return c.redirect(`${url.pathname}${url.search}`, 303);
  };
}

/**
 * Every request needs a session cookie this console issued, on this
 * listener's port.
 */
export function requireSession(
  keys: ConsoleKeys,
  port: () => number,
): MiddlewareHandler<ConsoleEnv> {
  return async function requireSession(c, next) {
    const session = keys.session(getCookie(c, cookieName(port())), port());
    if (session === null) {
      throw refusal("open it with: deno task dbport console");
    }
    c.set("session", session);
    await next();
  };
}

/**
 * A request that changes something must come from a page of this console
 * (`Origin` is its own) and carry the session's CSRF token (the form field
 * `csrf` or the header `X-CSRF-Token`).
 */
export function sameOriginWithToken(): MiddlewareHandler<ConsoleEnv> {
  return async function sameOriginWithToken(c, next) {
    if (c.req.method === "GET" || c.req.method === "HEAD") return await next();
    const origin = c.req.header("origin");
    if (origin !== `http://${c.req.header("host")?.toLowerCase()}`) {
      throw HttpError.plain(
        403,
        "forbidden_origin",
        `Origin ${
          origin === undefined ? "(missing)" : JSON.stringify(origin)
        } is not this console`,
      );
    }
    let form: Record<string, string> = {};
    await formLimit(c, async () => {
      form = await readForm(c);
    });
    const token = c.req.header("x-csrf-token") ?? form.csrf ?? "";
    if (!sameSecret(token, c.get("session").csrf)) {
      throw HttpError.plain(
        403,
        "forbidden_csrf",
        "The form's CSRF token is missing or not this session's; reload the page",
      );
    }
    c.set("form", form);
    await next();
  };
}

/**
 * Forms are cut at {@linkcode MAX_FORM_BYTES} by Hono's own limit: the
 * declared length, or the bytes as they arrive when none is declared.
 */
const formLimit = bodyLimit({
  maxSize: MAX_FORM_BYTES,
  onError: () => {
    throw HttpError.plain(413, "too_large", "The form is too large");
  },
});

/** A URL-encoded form, under {@linkcode formLimit}. */
async function readForm(c: Context): Promise<Record<string, string>> {
  const text = await c.req.text();
  const type = c.req.header("content-type") ?? "";
  if (text !== "" && !type.startsWith("application/x-www-form-urlencoded")) {
    throw HttpError.plain(
      415,
      "unsupported_media_type",
      "The console takes application/x-www-form-urlencoded forms",
    );
  }
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    // Repeated fields (the token form's connections) are joined by commas.
    form[name] = name in form ? `${form[name]},${value}` : value;
  }
  return form;
}

/** Refused without a session: nothing about connections is shown. */
function refusal(why: string): HttpError {
  return HttpError.plain(
    403,
    "forbidden",
    `This is the dbport console; ${why}`,
  );
}
