import { assertEquals } from "@std/assert";
import { createHmac, randomBytes } from "node:crypto";
import { commandWords } from "../../lib/cli/ssh.ts";
import {
  checkHostKey,
  fingerprint,
  knownHostsLine,
} from "../../lib/db/ssh/known_hosts.ts";
import { checkSshSetting, parseJump } from "../../lib/db/ssh/setting.ts";

/** A key blob of a type: string "ssh-ed25519" then 32 bytes. */
function blob(seed: number): Uint8Array {
  const type = new TextEncoder().encode("ssh-ed25519");
  const out = new Uint8Array(4 + type.length + 4 + 32);
  const view = new DataView(out.buffer);
  view.setUint32(0, type.length);
  out.set(type, 4);
  view.setUint32(4 + type.length, 32);
  out.fill(seed, 8 + type.length);
  return out;
}
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

Deno.test("checkHostKey() trusts only the key listed for that host and port", () => {
  const key = blob(1);
  const file = knownHostsLine("db.example", 2222, key);
  assertEquals(file, `[db.example]:2222 ssh-ed25519 ${b64(key)}`);
  assertEquals(checkHostKey([file], "db.example", 2222, key), {
    status: "known",
  });
  // Port 22 is written without brackets, and another port is another host.
  assertEquals(checkHostKey([file], "db.example", 22, key), {
    status: "unknown",
  });
  assertEquals(checkHostKey([file], "other.example", 2222, key), {
    status: "unknown",
  });
  assertEquals(checkHostKey([file], "db.example", 2222, blob(2)), {
    status: "changed",
    listed: fingerprint(key),
  });
});

Deno.test("checkHostKey() reads hashed names, patterns, negations and @revoked", () => {
  const key = blob(3);
  const salt = randomBytes(20);
  const hash = createHmac("sha1", salt).update("bastion.example").digest(
    "base64",
  );
  const hashed = `|1|${salt.toString("base64")}|${hash} ssh-ed25519 ${
    b64(key)
  }`;
  assertEquals(checkHostKey([hashed], "bastion.example", 22, key), {
    status: "known",
  });
  assertEquals(checkHostKey([hashed], "bastion2.example", 22, key), {
    status: "unknown",
  });
  const pattern = `*.corp.example,!evil.corp.example ssh-ed25519 ${b64(key)}`;
  assertEquals(checkHostKey([pattern], "db.corp.example", 22, key), {
    status: "known",
  });
  assertEquals(checkHostKey([pattern], "evil.corp.example", 22, key), {
    status: "unknown",
  });
  const revoked = `@revoked * ssh-ed25519 ${b64(key)}\n${pattern}`;
  assertEquals(checkHostKey([revoked], "db.corp.example", 22, key), {
    status: "revoked",
  });
  // Comments and broken lines are skipped, not fatal.
  assertEquals(
    checkHostKey(["# note\n\ngarbage\n" + pattern], "db.corp.example", 22, key),
    { status: "known" },
  );
});

Deno.test("fingerprint() is OpenSSH's SHA256 without padding", () => {
  assertEquals(/^SHA256:[A-Za-z0-9+/]{43}$/.test(fingerprint(blob(4))), true);
});

Deno.test("checkSshSetting() refuses what cannot work, never quoting a secret", () => {
  const ok = { host: "b.example", user: "deploy" };
  assertEquals(checkSshSetting(ok), null);
  assertEquals(checkSshSetting({ configHost: "prod" }), null);
  assertEquals(
    checkSshSetting({ ...ok, port: 70000 }),
    ".port must be 1-65535",
  );
  assertEquals(
    checkSshSetting({ host: "b" }),
    'needs "host" and "user", or "configHost"',
  );
  assertEquals(
    checkSshSetting({ ...ok, configHost: "prod" }),
    '"configHost" stands for host, port, user, key and jump: give it alone',
  );
  assertEquals(
    checkSshSetting({ ...ok, passwordEnv: "A", passwordCommand: ["x"] }),
    'give "passwordEnv" or "passwordCommand", not both',
  );
  const secret = checkSshSetting({ ...ok, passphrase: 42, extra: "hunter2" });
  assertEquals(secret?.includes("hunter2"), false);
  assertEquals(checkSshSetting({ ...ok, jump: "a@b:1,,c" }) !== null, true);
});

Deno.test("parseJump() reads ProxyJump's list; commandWords() splits like a shell, without one", () => {
  assertEquals(parseJump("ops@jump1:2200,jump2,[::1]:22"), [
    { host: "jump1", user: "ops", port: 2200 },
    { host: "jump2" },
    { host: "::1", port: 22 },
  ]);
  assertEquals(parseJump("a b"), null);
  assertEquals(commandWords(`op read "op://vault/db item/password"`), [
    "op",
    "read",
    "op://vault/db item/password",
  ]);
  assertEquals(commandWords(`sh -c 'echo $(id)'`), ["sh", "-c", "echo $(id)"]);
});
