/**
 * A real headless Chromium (Debian's `chromium`) driven by puppeteer-core,
 * for the console's end-to-end tests. Started with the flags this machine
 * needs (no sandbox as root, no GPU, no background networking on a closed
 * network) and a fresh profile that is removed after.
 *
 * @module
 */

import puppeteer, { type Browser } from "puppeteer-core";
import { needsInstalled } from "./_installed.ts";

/** Where Debian installs it (`apt-get install -y chromium`). */
export const CHROMIUM = Deno.env.get("DBPORT_TEST_CHROMIUM") ??
  "/usr/bin/chromium";

/** Where tests save screenshots (gitignored). */
export const ARTIFACTS = new URL("../test-artifacts/", import.meta.url);

/** Whether Chromium is installed; CI never skips (`.ci/run` installs it). */
export function needsChromium(): { ignore: boolean } {
  return needsInstalled(
    CHROMIUM,
    "apt-get install -y chromium",
    "the console's browser tests do not run",
  );
}

/** A started browser that closes itself and removes its profile. */
export interface TestBrowser extends AsyncDisposable {
  readonly browser: Browser;
}

/** Start Chromium headless with a new, empty profile. */
export async function startBrowser(): Promise<TestBrowser> {
  const profile = await Deno.makeTempDir({ prefix: "dbport-chromium-" });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    userDataDir: profile,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
      "--no-first-run",
    ],
  });
  return {
    browser,
    async [Symbol.asyncDispose]() {
      await browser.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

/** Save a screenshot of `page` as test-artifacts/<name>.png. */
export async function screenshot(
  page: { screenshot(options: { path: string; fullPage: boolean }): unknown },
  name: string,
): Promise<void> {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({
    path: new URL(`${name}.png`, ARTIFACTS).pathname,
    fullPage: true,
  });
}
