/**
 * The host dialog: how the server asks the user on this machine for consent,
 * chosen by `settings.hostDialog`. `"terminal"` asks on the server's own
 * terminal, `"os"` shows the desktop's dialog (`osascript` on macOS, `zenity`
 * or `kdialog` on Linux, a message box on Windows), `"console"` waits on the
 * browser console's Approvals page, `"deny"` refuses everything,
 * `{"command": [...]}` runs a program with the request as JSON on standard
 * input (exit code 0 approves), and `"auto"` picks the terminal, else the OS
 * dialog, else the console, else deny.
 *
 * The dialog's absence is never an approval.
 *
 * @module
 */

import type { HostDialog as Setting } from "./settings.ts";
import { statementForApproval } from "./visible_text.ts";
import { BRIDGE_TOKEN_NAME, tokenLabel } from "../base/identity.ts";

/** What the user is asked, as a dialog shows it (and a command reads it). */
export interface DialogRequest {
  /** `connection` when the first use of an askEachTime connection is asked. */
  kind: "read" | "write" | "destructive" | "connection";
  /** The statement's tier, when there is a statement. */
  tier?: "read" | "write" | "destructive" | null;
  connection: { id: string; name: string };
  client: string;
  token: string;
  statement: string | null;
  safeMode: string;
  /** One line: "Allow a query on "Demo shop"?" */
  message: string;
  /** Why the user is asked. */
  reasons: string[];
  /**
   * What the write changes, measured before asking (docs/security.md
   * "Write previews"): `{rows_affected, table?, columns, rows, tables?,
   * changes?, keys_bound?, row_choice?, exact, note?}`; absent when there is
   * no write or previews are off.
   */
  preview?: Record<string, unknown>;
  /** The preview in one line: "Changes 3 rows of orders". */
  previewLine?: string;
}

/**
 * The user's answer: `approve`, `deny`, `dismissed` (closed or timed out
 * without an answer) or `unavailable` (no way to ask; `why` says why).
 */
export type DialogAnswer =
  | { answer: "approve" | "deny" | "dismissed" }
  | { answer: "unavailable"; why: string };

/** A way to ask the user. */
export interface Dialog {
  ask(request: DialogRequest, signal: AbortSignal): Promise<DialogAnswer>;
}

/**
 * The dialog for a `hostDialog` setting; `browser` is the console's dialog,
 * null when the console is off.
 */
export function dialogFor(
  setting: Setting,
  env: DialogEnv = hostEnv(),
  browser: Dialog | null = null,
): Dialog {
  if (typeof setting === "object") return commandDialog(setting.command);
  switch (setting) {
    case "deny":
      return fixed({
        answer: "unavailable",
        why:
          'the user\'s settings refuse every request that needs approval (hostDialog is "deny")',
      });
    case "terminal":
      return env.terminal ? terminalDialog() : fixed({
        answer: "unavailable",
        why: 'hostDialog is "terminal" but the server has no terminal',
      });
    case "os":
      return osDialog(env) ?? fixed({
        answer: "unavailable",
        why: 'hostDialog is "os" but no desktop dialog is available',
      });
    case "console":
      return browser ?? fixed({
        answer: "unavailable",
        why:
          'hostDialog is "console" but the console is off ("console": false in settings.json)',
      });
    case "auto":
      if (env.terminal) return terminalDialog();
      return osDialog(env) ?? browser ?? fixed({
        answer: "unavailable",
        why:
          "the server has no terminal, no desktop dialog and no console to ask the user (set hostDialog in settings.json)",
      });
  }
}

/**
 * Where a setting asks the user, in words (for `serve`'s banner); `console`
 * is the console's address, null when it is off.
 */
export function describeDialog(
  setting: Setting,
  env: DialogEnv = hostEnv(),
  console: string | null = null,
): string {
  if (typeof setting === "object") {
    return `the command ${JSON.stringify(setting.command[0])} (hostDialog)`;
  }
  const os = osDialogName(env);
  switch (setting) {
    case "deny":
      return 'refused (hostDialog is "deny")';
    case "terminal":
      return env.terminal ? "asked on this terminal" : "refused: no terminal";
    case "os":
      return os ?? "refused: no desktop dialog";
    case "console":
      return console === null
        ? "refused: the console is off"
        : `on the console's Approvals page, ${console}`;
    case "auto":
      if (env.terminal) return "asked on this terminal";
      if (os !== null) return os;
      return console === null
        ? 'refused: no terminal, no desktop dialog and no console (set "hostDialog")'
        : `on the console's Approvals page, ${console} (no terminal or desktop dialog here)`;
  }
}

function osDialogName(env: DialogEnv): string | null {
  const program = osDialogProgram(env);
  return program === null
    ? null
    : program === "osascript"
    ? "a macOS dialog"
    : program === "powershell"
    ? "a Windows message box"
    : `a ${program} dialog`;
}

/** The desktop's dialog program, if it has one. */
function osDialogProgram(
  env: DialogEnv,
): "osascript" | "zenity" | "kdialog" | "powershell" | null {
  if (env.os === "darwin") return env.has("osascript") ? "osascript" : null;
  if (env.os === "windows") {
    return env.has("powershell.exe") ? "powershell" : null;
  }
  if (env.os !== "linux" || !env.display) return null;
  if (env.has("zenity")) return "zenity";
  if (env.has("kdialog")) return "kdialog";
  return null;
}

/** What the choice depends on. */
export interface DialogEnv {
  os: typeof Deno.build.os;
  terminal: boolean;
  display: boolean;
  /** Whether a program is on PATH. */
  has(program: string): boolean;
}

/** This process's environment. */
export function hostEnv(): DialogEnv {
  return {
    os: Deno.build.os,
    terminal: Deno.stdin.isTerminal() && Deno.stderr.isTerminal(),
    display: Boolean(
      Deno.env.get("DISPLAY") || Deno.env.get("WAYLAND_DISPLAY"),
    ),
    has: onPath,
  };
}

function onPath(program: string): boolean {
  const separator = Deno.build.os === "windows" ? ";" : ":";
  for (const dir of (Deno.env.get("PATH") ?? "").split(separator)) {
    if (dir === "") continue;
    try {
      if (Deno.statSync(`${dir}/${program}`).isFile) return true;
    } catch {
      // not here
    }
  }
  return false;
}

function fixed(answer: DialogAnswer): Dialog {
  return { ask: () => Promise.resolve(answer) };
}

/** Run a program; its exit status is the answer. */
async function run(
  argv: readonly string[],
  signal: AbortSignal,
  input: string | null,
): Promise<{ code: number; stdout: string } | null> {
  const [program, ...args] = argv;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program!, {
      args,
      stdin: input === null ? "null" : "piped",
      stdout: "piped",
      stderr: "null",
      signal,
    }).spawn();
  } catch {
    return null;
  }
  if (input !== null) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input)).catch(() => {});
    await writer.close().catch(() => {});
  }
  const output = await child.output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
  };
}

/** `{"command": [...]}`: exit code 0 approves, anything else denies. */
function commandDialog(argv: readonly string[]): Dialog {
  return {
    async ask(request, signal) {
      const ran = await run(argv, signal, JSON.stringify(request) + "\n");
      if (ran === null) {
        return {
          answer: "unavailable",
          why: `the hostDialog command ${
            JSON.stringify(argv[0])
          } could not be started`,
        };
      }
      return { answer: ran.code === 0 ? "approve" : "deny" };
    },
  };
}

/** The desktop's own dialog, or null when there is none. */
function osDialog(env: DialogEnv): Dialog | null {
  const program = osDialogProgram(env);
  if (program === "osascript") {
    return {
      async ask(request, signal) {
        const ran = await run(
          [
            "osascript",
            "-e",
            "on run argv",
            "-e",
            'display dialog (item 1 of argv) with title "dbport" buttons {"Deny", "Allow"} default button "Deny" cancel button "Deny" with icon caution giving up after 600',
            "-e",
            "end run",
            dialogText(request),
          ],
          signal,
          null,
        );
        if (ran === null) return { answer: "dismissed" };
        if (/gave up:true/.test(ran.stdout)) return { answer: "dismissed" };
        if (ran.code === 0 && /button returned:Allow/.test(ran.stdout)) {
          return { answer: "approve" };
        }
        return { answer: "deny" };
      },
    };
  }
  if (program === "zenity") {
    return {
      async ask(request, signal) {
        const ran = await run(
          [
            "zenity",
            "--question",
            "--title=dbport",
            "--no-markup",
            "--ok-label=Allow",
            "--cancel-label=Deny",
            `--text=${dialogText(request)}`,
          ],
          signal,
          null,
        );
        // 0 Allow, 1 Deny (or closed), 5 timed out.
        return yesNo(ran);
      },
    };
  }
  if (program === "powershell") {
    return {
      async ask(request, signal) {
        const { argv, input } = windowsDialog(request);
        const ran = await run(argv, signal, input);
        // 0 Yes, 1 No (or closed), anything else: no answer.
        return yesNo(ran);
      },
    };
  }
  if (program === "kdialog") {
    return {
      async ask(request, signal) {
        const ran = await run(
          [
            "kdialog",
            "--title",
            "dbport",
            "--yesno",
            dialogText(request),
          ],
          signal,
          null,
        );
        // 0 yes, 1 no, anything else closed.
        return yesNo(ran);
      },
    };
  }
  return null;
}

/**
 * The Windows message box: a fixed PowerShell script, the text arriving on
 * stdin as base64 of its UTF-8. Nothing of the request is ever part of the
 * script, so no quote, backtick, `$(...)` or line break in a statement can
 * change what PowerShell runs, and the console's code page cannot garble it.
 */
export function windowsDialog(
  request: DialogRequest,
): { argv: string[]; input: string } {
  const bytes = new TextEncoder().encode(dialogText(request));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return { argv: [...WINDOWS_DIALOG], input: `${btoa(binary)}\n` };
}

const WINDOWS_DIALOG = Object.freeze([
  "powershell.exe",
  "-NoProfile",
  "-NonInteractive",
  "-ExecutionPolicy",
  "Bypass",
  "-Command",
  [
    "$text = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String([Console]::In.ReadToEnd().Trim()))",
    "Add-Type -AssemblyName System.Windows.Forms",
    "$answer = [System.Windows.Forms.MessageBox]::Show($text, 'dbport', 'YesNo', 'Warning', 'Button2')",
    "if ($answer -eq [System.Windows.Forms.DialogResult]::Yes) { exit 0 } else { exit 1 }",
  ].join("; "),
]);

/** A yes/no dialog's exit code: 0 yes, 1 no, anything else no answer. */
function yesNo(ran: { code: number } | null): DialogAnswer {
  if (ran === null || (ran.code !== 0 && ran.code !== 1)) {
    return { answer: "dismissed" };
  }
  return { answer: ran.code === 0 ? "approve" : "deny" };
}

/** The dialog's text: who asks what, why, and the statement. */
export function dialogText(request: DialogRequest): string {
  const lines = [
    request.message,
    request.token === BRIDGE_TOKEN_NAME
      ? `Client: ${request.client} (through the ${tokenLabel(request.token)})`
      : `Client: ${request.client} (token "${request.token}")`,
    ...request.reasons.map((reason) => `Because ${reason}.`),
  ];
  if (request.previewLine !== undefined) lines.push(request.previewLine);
  if (request.statement !== null) {
    lines.push("", statementForApproval(request.statement));
  }
  return lines.join("\n");
}

let terminalQueue: Promise<unknown> = Promise.resolve();

/** A line typed on the terminal, and when it arrived. */
interface Typed {
  text: string;
  at: number;
}

/**
 * Every line typed on the server's terminal, read as it arrives. A question
 * takes only a line typed after it was shown: anything typed before - a `y`
 * meant for a question since withdrawn - is discarded, so it can never
 * answer the next one (docs/security.md "Approvals").
 */
export class TerminalLines {
  #queue: Typed[] = [];
  #waiting: ((typed: Typed | null) => void) | null = null;
  #ended = false;

  constructor(source: ReadableStream<string>, now: () => number) {
    (async () => {
      for await (const text of source) {
        const typed = { text, at: now() };
        const wake = this.#waiting;
        this.#waiting = null;
        if (wake !== null) wake(typed);
        else this.#queue.push(typed);
      }
    })().catch(() => {}).finally(() => {
      this.#ended = true;
      this.#waiting?.(null);
      this.#waiting = null;
    });
  }

  /** The first line typed at or after `since`; null at end of input or abort. */
  next(since: number, signal: AbortSignal): Promise<Typed | null> {
    this.#queue = this.#queue.filter((typed) => typed.at >= since);
    const ready = this.#queue.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.#ended) return Promise.resolve(null);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.#waiting = null;
        resolve(null);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting = (typed) => {
        signal.removeEventListener("abort", onAbort);
        resolve(typed);
      };
    });
  }
}

let terminal: TerminalLines | null = null;

/** Ask on the server's terminal, one question at a time. */
function terminalDialog(): Dialog {
  return {
    ask(request, signal) {
      const asked = terminalQueue.then(() => askTerminal(request, signal));
      terminalQueue = asked.catch(() => {});
      return asked;
    },
  };
}

/** Ask `request` on a terminal whose typed lines come from `lines`. */
export async function askOnTerminal(
  request: DialogRequest,
  signal: AbortSignal,
  lines: TerminalLines,
  write: (text: string) => Promise<unknown>,
  now: () => number,
): Promise<DialogAnswer> {
  if (signal.aborted) return { answer: "dismissed" };
  await write(`\n${dialogText(request)}\nAllow? [y/N] `);
  const shownAt = now();
  const line = await lines.next(shownAt, signal);
  if (line === null) {
    if (signal.aborted) {
      await write("\n(the request ended; question withdrawn)\n");
    }
    return { answer: "dismissed" };
  }
  return { answer: /^\s*y(es)?\s*$/i.test(line.text) ? "approve" : "deny" };
}

/** A terminal reader over `source` (tests feed their own lines). */
export function terminalLines(
  source: ReadableStream<string>,
  now: () => number = performance.now.bind(performance),
): TerminalLines {
  return new TerminalLines(source, now);
}

function askTerminal(
  request: DialogRequest,
  signal: AbortSignal,
): Promise<DialogAnswer> {
  terminal ??= terminalLines(
    Deno.stdin.readable.pipeThrough(new TextDecoderStream())
      .pipeThrough(splitLines()),
  );
  const encoder = new TextEncoder();
  return askOnTerminal(
    request,
    signal,
    terminal,
    (text) => Deno.stderr.write(encoder.encode(text)),
    performance.now.bind(performance),
  );
}

function splitLines(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream({
    transform(chunk, controller) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const part of parts) controller.enqueue(part);
    },
  });
}
