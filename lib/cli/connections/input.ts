/**
 * How a password reaches `connections add|set` other than on the command
 * line: `--password-stdin`, or `--password` with no value asked on the
 * terminal without echo.
 *
 * @module
 */

import { UsageError } from "../io.ts";

/** How a password reaches the CLI other than on the command line. */
export interface SecretInput {
  /** All of standard input (for --password-stdin). */
  stdin(): Promise<string>;
  /** Ask on the terminal without echo; null when there is no terminal. */
  ask(prompt: string): Promise<string | null>;
  /** A line typed on standard input after `prompt`; null at its end. */
  line(prompt: string): Promise<string | null>;
  /**
   * A yes/no question on the terminal (`yes` when only Enter is typed);
   * null when there is no terminal to ask on.
   */
  confirm?(question: string, yes: boolean): Promise<boolean | null>;
}

/** Standard input and the terminal of this process. */
export const processInput: SecretInput = {
  async confirm(question, yes) {
    if (!Deno.stdin.isTerminal()) return null;
    const answer = await this.line(`${question} [${yes ? "Y/n" : "y/N"}] `);
    if (answer === null) return null;
    if (answer.trim() === "") return yes;
    return /^\s*y(es)?\s*$/i.test(answer);
  },
  async line(prompt) {
    await Deno.stderr.write(new TextEncoder().encode(prompt));
    const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream())
      .getReader();
    try {
      let text = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text === "" ? null : text;
        text += value;
        const end = text.indexOf("\n");
        if (end !== -1) return text.slice(0, end);
      }
    } finally {
      reader.releaseLock();
    }
  },
  async stdin() {
    return await new Response(Deno.stdin.readable).text();
  },
  async ask(prompt) {
    if (!Deno.stdin.isTerminal()) return null;
    await Deno.stderr.write(new TextEncoder().encode(prompt));
    Deno.stdin.setRaw(true);
    try {
      let secret = "";
      const buffer = new Uint8Array(64);
      for (;;) {
        const n = await Deno.stdin.read(buffer);
        if (n === null) break;
        const text = new TextDecoder().decode(buffer.subarray(0, n));
        if (text.includes("\u0003")) throw new UsageError("cancelled");
        const end = text.search(/[\r\n]/);
        if (end !== -1) {
          secret += text.slice(0, end);
          break;
        }
        for (const c of text) {
          if (c === "\u007f" || c === "\b") secret = secret.slice(0, -1);
          else secret += c;
        }
      }
      return secret;
    } finally {
      Deno.stdin.setRaw(false);
      await Deno.stderr.write(new TextEncoder().encode("\n"));
    }
  },
};

/**
 * `--password` with no value (last, or before another flag) becomes a
 * question on the terminal; `--password-stdin` reads standard input. Either
 * way the password ends up as `--password=VALUE` for the flag parser.
 */
export async function passwordArgs(
  command: string,
  args: string[],
  input: SecretInput,
): Promise<string[]> {
  const out: string[] = [];
  let stdinRead = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (arg === "--password-stdin" || arg === "--ssh-password-stdin") {
      if (stdinRead) {
        throw new UsageError(
          `${command}: standard input holds one secret: give --password-stdin or --ssh-password-stdin, not both`,
        );
      }
      stdinRead = true;
      const text = (await input.stdin()).replace(/\r?\n$/, "");
      if (text === "") {
        throw new UsageError(`${command}: ${arg} read no password`);
      }
      out.push(`${arg.replace("-stdin", "")}=${text}`);
    } else if (
      arg === "--password" && (next === undefined || next.startsWith("--"))
    ) {
      const asked = await input.ask("Password: ");
      if (asked === null) {
        throw new UsageError(
          `${command}: --password needs a value; with no terminal to ask on, use --password-stdin`,
        );
      }
      out.push(`--password=${asked}`);
    } else out.push(arg);
  }
  return out;
}
