/**
 * What the console's browser tests share: a page opened with the key, the
 * session's cookie and CSRF token for raw requests, the four screenshots of
 * a page (light and dark, desktop and 390 px), CSP violations collected
 * from the page's console, and the key/cookie/CSRF/Host checks of a route
 * over plain HTTP.
 *
 * @module
 */

import type { Browser, Page } from "puppeteer-core";
import { assertEquals } from "@std/assert";
import { screenshot } from "./_browser.ts";

/** A console page in Chromium with what a raw request needs. */
export interface ConsolePage {
  page: Page;
  /** `http://127.0.0.1:<port>/c/<prefix>/` */
  base: string;
  port: number;
  cookie: string;
  csrf: string;
  origin: string;
  /** CSP violations and errors the page's console reported so far. */
  problems: string[];
}

/** Open the console with its key; the cookie and CSRF token read back. */
export async function openConsole(
  browser: Browser,
  console: { keyUrl: string; url: string; port: number },
): Promise<ConsolePage> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    const text = message.text();
    if (
      message.type() === "error" || /Content Security Policy/i.test(text)
    ) problems.push(text);
  });
  page.on("pageerror", (error) => problems.push(String(error)));
  const opened = await page.goto(console.keyUrl);
  assertEquals(opened?.status(), 200);
  const cookies = await browser.cookies();
  const own = cookies.find((c) => c.name === `dbport_console_${console.port}`)!;
  // The Tokens page always has a form, so the session's CSRF token.
  await page.goto(`${console.url}tokens`);
  const csrf = await page.$eval(
    "input[name=csrf]",
    (node) => (node as unknown as { value: string }).value,
  );
  return {
    page,
    base: console.url,
    port: console.port,
    cookie: `${own.name}=${own.value}`,
    csrf,
    origin: `http://127.0.0.1:${console.port}`,
    problems,
  };
}

/** test-artifacts/<name>-{light,dark}-{desktop,390}.png */
export async function screenshots(page: Page, name: string): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMediaFeatures([
      { name: "prefers-color-scheme", value: scheme },
    ]);
    for (const [label, width] of [["desktop", 1280], ["390", 390]] as const) {
      await page.setViewport({ width, height: 900 });
      // A loaded machine may still be laying the page out at the new width
      // ("Cannot take screenshot with 0 width"): once more after a moment.
      await screenshot(page, `${name}-${scheme}-${label}`).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 500));
        await screenshot(page, `${name}-${scheme}-${label}`);
      });
    }
  }
  await page.setViewport({ width: 1280, height: 900 });
  await page.emulateMediaFeatures([
    { name: "prefers-color-scheme", value: "light" },
  ]);
}

/** Whether the page is wider than the viewport at 390 px (a sideways scroll). */
export async function overflowsAt390(page: Page): Promise<number> {
  await page.setViewport({ width: 390, height: 900 });
  const extra = await page.evaluate(`
    document.documentElement.scrollWidth - document.documentElement.clientWidth
  `) as number;
  await page.setViewport({ width: 1280, height: 900 });
  return extra;
}

/** A request with exactly these headers and form, over fetch. */
export async function send(
  url: string,
  method: "GET" | "POST",
  headers: Record<string, string>,
  form?: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const answer = await fetch(url, {
    method,
    redirect: "manual",
    headers: {
      ...(form === undefined
        ? {}
        : { "content-type": "application/x-www-form-urlencoded" }),
      ...headers,
    },
    ...(form === undefined
      ? {}
      : { body: new URLSearchParams(form).toString() }),
  });
  return { status: answer.status, text: await answer.text() };
}

/**
 * The rules every route keeps, checked over plain HTTP: no cookie → 403, a
 * foreign Host → 403 (fetch cannot forge Host, so a raw socket), outside
 * the prefix → 404; a POST also needs its own Origin and the CSRF token.
 * `form` is a valid form for a POST route (without `csrf`).
 */
export async function assertGuarded(
  t: ConsolePage,
  method: "GET" | "POST",
  path: string,
  form: Record<string, string> = {},
): Promise<void> {
  const url = `${t.base}${path.replace(/^\//, "")}`;
  const own = { cookie: t.cookie, origin: t.origin };
  const body = method === "POST" ? form : undefined;
  const withCsrf = method === "POST" ? { ...form, csrf: t.csrf } : undefined;
  const noCookie = await send(url, method, { origin: t.origin }, withCsrf);
  assertEquals(noCookie.status, 403, `${method} ${path} without a cookie`);
  if (method === "GET") {
    const wrongKey = await send(
      `${url}${url.includes("?") ? "&" : "?"}key=${"0".repeat(64)}`,
      method,
      {},
    );
    assertEquals(wrongKey.status, 403, `GET ${path} with a wrong key`);
  }
  const wrongHost = await rawStatus(
    t.port,
    `${method} ${
      new URL(url).pathname
    } HTTP/1.1\r\nHost: evil.example:${t.port}\r\nCookie: ${t.cookie}\r\nOrigin: ${t.origin}`,
  );
  assertEquals(wrongHost, 403, `${method} ${path} from another Host`);
  const outside = await send(
    `${t.origin}/${path.replace(/^\//, "")}`,
    method,
    own,
    withCsrf,
  );
  assertEquals(outside.status, 404, `${method} ${path} outside the prefix`);
  if (method === "POST") {
    const noCsrf = await send(url, method, own, body);
    assertEquals(noCsrf.status, 403, `POST ${path} without the CSRF token`);
    const badCsrf = await send(url, method, own, {
      ...form,
      csrf: "0".repeat(64),
    });
    assertEquals(badCsrf.status, 403, `POST ${path} with a wrong CSRF token`);
    const foreign = await send(url, method, {
      cookie: t.cookie,
      origin: "http://evil.example",
    }, withCsrf);
    assertEquals(foreign.status, 403, `POST ${path} from another Origin`);
  }
}

/**
 * The status of a request sent as these exact header lines, byte for byte
 * (a forged Host).
 */
export async function rawStatus(port: number, head: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(
      new TextEncoder().encode(
        `${head}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      ),
    );
    const buffer = new Uint8Array(4096);
    let text = "";
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
      if (text.includes("\r\n")) break;
    }
    return Number(text.split(" ")[1]);
  } finally {
    try {
      conn.close();
    } catch { /* closed by the server */ }
  }
}
