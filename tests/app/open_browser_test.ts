import { assertEquals } from "@std/assert";
import { browserCommand } from "../../lib/app/open_browser.ts";

const env = (os: typeof Deno.build.os, display: boolean, has: boolean) => ({
  os,
  terminal: false,
  display,
  has: () => has,
});

Deno.test("browserCommand() passes the address as one argument, never through a shell", () => {
  const url = "http://127.0.0.1:4000/?key=abc";
  assertEquals(browserCommand(url, env("darwin", false, false), undefined), [
    "open",
    url,
  ]);
  assertEquals(browserCommand(url, env("linux", true, true), undefined), [
    "xdg-open",
    url,
  ]);
  assertEquals(
    browserCommand(url, env("windows", false, false), undefined),
    ["rundll32", "url.dll,FileProtocolHandler", url],
  );
  // Headless Linux: nothing to open; the caller prints the address.
  assertEquals(browserCommand(url, env("linux", false, true), undefined), null);
  assertEquals(browserCommand(url, env("linux", false, false), "firefox"), [
    "firefox",
    url,
  ]);
});
