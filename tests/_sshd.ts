/**
 * A real OpenSSH server for the SSH tunnel tests (Debian's openssh-server):
 * a host key, a user key with a passphrase and its authorized_keys in a temp
 * dir, `sshd -D` on a free loopback port. It can be killed and started again
 * on the same port with the same keys.
 *
 * @module
 */

import { freePort } from "./_server.ts";
import { waitUntil } from "./_wait.ts";
import { needsInstalled } from "./_installed.ts";

export const SSHD = "/usr/sbin/sshd";
/** The test user key's passphrase: it must never show in an answer or log. */
export const PASSPHRASE = "correct horse battery staple";

/** Whether sshd is installed; CI never skips (`.ci/run` installs it). */
export function needsSshd(): { ignore: boolean } {
  return needsInstalled(
    SSHD,
    "apt-get install -y openssh-server",
    "the SSH tunnel tests do not run",
  );
}

/** A running sshd. */
export interface Sshd extends AsyncDisposable {
  readonly port: number;
  readonly dir: string;
  /** The user key (encrypted with PASSPHRASE). */
  readonly userKey: string;
  /** The host's public key line: `ssh-ed25519 AAAA…`. */
  readonly hostKey: string;
  /** The known_hosts line that trusts it. */
  readonly knownHostsLine: string;
  /** Its SHA256 fingerprint as ssh-keygen prints it. */
  readonly fingerprint: string;
  kill(): Promise<void>;
  start(): Promise<void>;
  /**
   * Stop (SIGSTOP) or continue (SIGCONT) sshd and every process below it:
   * stopped, it answers nothing on the connections it holds.
   */
  freeze(on: boolean): Promise<void>;
}

async function run(program: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(program, { args, stderr: "piped" })
    .output();
  if (!output.success) {
    throw new Error(
      `${program} ${args.join(" ")}: ${
        new TextDecoder().decode(output.stderr)
      }`,
    );
  }
  return new TextDecoder().decode(output.stdout);
}

/** Start sshd with a fresh host key; the user key is `sameUserAs`'s, or new. */
export async function startSshd(sameUserAs?: Sshd): Promise<Sshd> {
  const dir = await Deno.makeTempDir({ prefix: "dbport-sshd-" });
  await Deno.mkdir("/run/sshd", { recursive: true }).catch(() => {});
  await run("ssh-keygen", [
    "-q",
    "-t",
    "ed25519",
    "-N",
    "",
    "-f",
    `${dir}/host_key`,
  ]);
  if (sameUserAs === undefined) {
    await run("ssh-keygen", [
      "-q",
      "-t",
      "ed25519",
      "-N",
      PASSPHRASE,
      "-f",
      `${dir}/user_key`,
    ]);
  } else {
    await Deno.copyFile(sameUserAs.userKey, `${dir}/user_key`);
    await Deno.copyFile(`${sameUserAs.userKey}.pub`, `${dir}/user_key.pub`);
    await Deno.chmod(`${dir}/user_key`, 0o600);
  }
  await Deno.copyFile(`${dir}/user_key.pub`, `${dir}/authorized_keys`);
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/sshd_config`,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${dir}/host_key`,
      `AuthorizedKeysFile ${dir}/authorized_keys`,
      `PidFile ${dir}/sshd.pid`,
      "UsePAM no",
      "StrictModes no",
      "PermitRootLogin prohibit-password",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "AllowTcpForwarding yes",
      "ClientAliveInterval 5",
      "LogLevel ERROR",
    ].join("\n") + "\n",
  );
  const hostKey = (await Deno.readTextFile(`${dir}/host_key.pub`)).trim()
    .split(/\s+/).slice(0, 2).join(" ");
  const fingerprint = (await run("ssh-keygen", [
    "-l",
    "-E",
    "sha256",
    "-f",
    `${dir}/host_key.pub`,
  ]))
    .split(/\s+/)[1]!;
  let child: Deno.ChildProcess | null = null;
  const start = async () => {
    child = new Deno.Command(SSHD, {
      args: ["-D", "-e", "-f", `${dir}/sshd_config`],
      stdout: "null",
      stderr: "null",
    }).spawn();
    await waitUntil(`sshd on 127.0.0.1:${port}`, async () => {
      try {
        (await Deno.connect({ hostname: "127.0.0.1", port })).close();
        return true;
      } catch {
        return false;
      }
    });
  };
  const kill = async () => {
    if (child === null) return;
    const running = child;
    child = null;
    // The listener and every session it forked (each holds live channels).
    for (const pid of await descendants(running.pid)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    running.kill("SIGKILL");
    await running.status;
  };
  const freeze = async (on: boolean) => {
    if (child === null) return;
    for (const pid of [child.pid, ...await descendants(child.pid)]) {
      try {
        Deno.kill(pid, on ? "SIGSTOP" : "SIGCONT");
      } catch { /* gone */ }
    }
  };
  await start();
  return {
    port,
    dir,
    userKey: `${dir}/user_key`,
    hostKey,
    knownHostsLine: `[127.0.0.1]:${port} ${hostKey}`,
    fingerprint,
    kill,
    start,
    freeze,
    async [Symbol.asyncDispose]() {
      await freeze(false);
      await kill();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** The process ids below `pid`, deepest first. */
async function descendants(pid: number): Promise<number[]> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "pid=", "--ppid", String(pid)],
    stdout: "piped",
  }).output();
  const children = new TextDecoder().decode(out.stdout).split(/\s+/)
    .filter((x) => x !== "").map(Number);
  const all: number[] = [];
  for (const child of children) all.push(...await descendants(child), child);
  return all;
}
