/**
 * Which handshake the bridge may trust (docs/wire.md "The stdio bridge" 7): the app
 * directory is this user's and not group/world-writable; the file is a
 * regular file of this user with mode 0600; it parses; its pid is alive; its
 * token has not expired; and on Linux that pid holds the listening port. The
 * server's proof of identity (`server/discover` answering the handshake's
 * instanceId) comes after, in `upstream.ts`.
 *
 * @module
 */

import { HANDSHAKE_FILE } from "../base/identity.ts";
import { inAppDir } from "../base/app_dir.ts";
import { type Handshake, parseHandshake } from "../protocol/handshake.ts";
import { isProcessAlive } from "../base/process.ts";

/** The outcome of {@linkcode readTrusted}. */
export type Trust = { ok: true; handshake: Handshake; path: string } | {
  ok: false;
  problem: string;
};

/** Read the handshake in `dir` and check everything the file itself can show. */
export async function readTrusted(dir: string, now: number): Promise<Trust> {
  const path = inAppDir(dir, HANDSHAKE_FILE);
  const posix = Deno.build.os !== "windows";
  if (posix) {
    const uid = Deno.uid();
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(dir);
    } catch {
      return { ok: false, problem: `the app directory ${dir} does not exist` };
    }
    if (info.uid !== uid) {
      return {
        ok: false,
        problem: `the app directory ${dir} is another user's`,
      };
    }
    if (((info.mode ?? 0) & 0o022) !== 0) {
      return {
        ok: false,
        problem: `the app directory ${dir} is group- or world-writable`,
      };
    }
  }
  let file: Deno.FileInfo;
  try {
    file = await Deno.lstat(path);
  } catch {
    return { ok: false, problem: `there is no handshake file at ${path}` };
  }
  if (!file.isFile) {
    return { ok: false, problem: `${path} is not a regular file` };
  }
  if (posix) {
    if (file.uid !== Deno.uid()) {
      return { ok: false, problem: `${path} is another user's` };
    }
    const mode = (file.mode ?? 0) & 0o777;
    if (mode !== 0o600) {
      return {
        ok: false,
        problem: `${path} has mode ${
          mode.toString(8).padStart(4, "0")
        }; only 0600 is trusted`,
      };
    }
  }
  const parsed = parseHandshake(await Deno.readTextFile(path));
  if (!parsed.ok) return { ok: false, problem: `${path}: ${parsed.problem}` };
  const handshake = parsed.handshake;
  if (!isProcessAlive(handshake.pid)) {
    return {
      ok: false,
      problem:
        `the server that wrote ${path} (pid ${handshake.pid}) is not running`,
    };
  }
  if (
    handshake.token === null || handshake.expiresAt === null ||
    !(Date.parse(handshake.expiresAt) > now)
  ) {
    return { ok: false, problem: `the token in ${path} has expired` };
  }
  if (
    Deno.build.os === "linux" &&
    (await pidListensOn(handshake.pid, handshake.port)) === false
  ) {
    return {
      ok: false,
      problem: `pid ${handshake.pid} does not hold port ${handshake.port}`,
    };
  }
  return { ok: true, handshake, path };
}

/**
 * Linux: whether `pid` holds the socket listening on 127.0.0.1:`port`.
 * `/proc/net/tcp` names the socket's inode and `/proc/<pid>/fd` links to it,
 * but Deno lets only `--allow-all` read /proc; with the bridge's own
 * permissions `ss -tlnp` (iproute2) answers instead. `null`: neither could
 * tell (the instance-id proof still stands).
 */
export async function pidListensOn(
  pid: number,
  port: number,
): Promise<boolean | null> {
  const fromProc = await procListensOn(pid, port);
  if (fromProc !== null) return fromProc;
  try {
    const output = await new Deno.Command("ss", {
      args: ["-Htlnp", `sport = :${port}`],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!output.success) return null;
    const text = new TextDecoder().decode(output.stdout);
    const local = text.split("\n").filter((line) =>
      /\s127\.0\.0\.1:\d+\s/.test(line) ||
      /\s\[::ffff:127\.0\.0\.1\]:\d+\s/.test(line)
    );
    if (local.length === 0) return false;
    return local.some((line) => new RegExp(`pid=${pid},`).test(line));
  } catch {
    return null;
  }
}

async function procListensOn(
  pid: number,
  port: number,
): Promise<boolean | null> {
  const inodes = new Set<string>();
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  try {
    const table = await Deno.readTextFile("/proc/net/tcp");
    for (const line of table.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address, state 0A = LISTEN, inode
      if (fields[1] === local && fields[3] === "0A" && fields[9]) {
        inodes.add(fields[9]);
      }
    }
  } catch {
    return null;
  }
  if (inodes.size === 0) return false;
  try {
    for await (const entry of Deno.readDir(`/proc/${pid}/fd`)) {
      try {
        const target = await Deno.readLink(`/proc/${pid}/fd/${entry.name}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode !== undefined && inodes.has(inode)) return true;
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return null;
  }
  return false;
}
