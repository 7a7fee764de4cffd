/**
 * Tests that run a program the machine may lack (Chromium, sshd): ignored,
 * with a loud SKIPPED line, where it is not installed; CI never skips
 * (`.ci/run` installs it).
 *
 * @module
 */

/**
 * The `Deno.test` options of a test that runs the program at `path`:
 * ignored where it is missing (never under CI), saying how to install it
 * (`install`) and what does not run (`skipped`).
 */
export function needsInstalled(
  path: string,
  install: string,
  skipped: string,
): { ignore: boolean } {
  let found = false;
  try {
    found = Deno.statSync(path).isFile;
  } catch { /* missing */ }
  if (!found && Deno.env.get("CI") === undefined) {
    // deno-lint-ignore no-console
    console.error(`SKIPPED: ${path} is missing (${install}); ${skipped}`);
    return { ignore: true };
  }
  return { ignore: false };
}
