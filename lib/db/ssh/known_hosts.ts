/**
 * Host keys, checked strictly (docs/connections.md "SSH tunnels"): a key is
 * trusted only when a known-hosts file (the user's `~/.ssh/known_hosts`, hashed
 * entries included, or dbport's own) lists it for that host and port. An
 * unknown key is refused with its fingerprint and the command that trusts it;
 * a key other than the one listed is refused loudly. Never trust on first use.
 *
 * @module
 */

import { createHash, createHmac } from "node:crypto";

/** One line of a known-hosts file. */
interface Entry {
  /** Host patterns (`host`, `[host]:port`, `*.example`, `!bad`), or a hashed name. */
  hosts: string[] | { salt: Uint8Array; hash: string };
  marker: "@revoked" | "@cert-authority" | null;
  type: string;
  /** The key blob in base64, as the file has it. */
  key: string;
}

/** The outcome of checking a host's key. */
export type HostKeyCheck =
  | { status: "known" }
  | { status: "unknown" }
  | { status: "changed"; listed: string }
  | { status: "revoked" };

/** The SSH key's type, read from its blob (`ssh-ed25519`, `rsa-sha2-512`…). */
export function keyType(blob: Uint8Array): string {
  if (blob.length < 4) return "unknown";
  const length = new DataView(blob.buffer, blob.byteOffset).getUint32(0);
  return new TextDecoder().decode(blob.subarray(4, 4 + length));
}

/** OpenSSH's fingerprint: `SHA256:` and the base64 of the blob's hash. */
export function fingerprint(blob: Uint8Array): string {
  const digest = createHash("sha256").update(blob).digest("base64");
  return `SHA256:${digest.replace(/=+$/, "")}`;
}

/** How a known-hosts file names a host: `host`, or `[host]:port` off 22. */
export function hostName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** A known-hosts line trusting `blob` for the host. */
export function knownHostsLine(
  host: string,
  port: number,
  blob: Uint8Array,
): string {
  return `${hostName(host, port)} ${keyType(blob)} ${
    btoa(String.fromCharCode(...blob))
  }`;
}

/** Parse the lines of a known-hosts file; lines it cannot read are skipped. */
export function parseKnownHosts(text: string): Entry[] {
  const entries: Entry[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const fields = line.split(/\s+/);
    let marker: Entry["marker"] = null;
    if (fields[0] === "@revoked" || fields[0] === "@cert-authority") {
      marker = fields.shift() as Entry["marker"];
    }
    const [names, type, key] = fields;
    if (names === undefined || type === undefined || key === undefined) {
      continue;
    }
    if (names.startsWith("|1|")) {
      const [, , salt, hash] = names.split("|");
      if (salt === undefined || hash === undefined) continue;
      entries.push({
        hosts: {
          salt: Uint8Array.from(atob(salt), (c) => c.charCodeAt(0)),
          hash,
        },
        marker,
        type,
        key,
      });
    } else {
      entries.push({ hosts: names.split(","), marker, type, key });
    }
  }
  return entries;
}

/** Whether an entry names the host (patterns with `*`, `?` and `!`). */
function names(entry: Entry, name: string): boolean {
  if (!Array.isArray(entry.hosts)) {
    const digest = createHmac("sha1", entry.hosts.salt).update(name).digest(
      "base64",
    );
    return digest === entry.hosts.hash;
  }
  let matched = false;
  for (const pattern of entry.hosts) {
    const negated = pattern.startsWith("!");
    if (glob(negated ? pattern.slice(1) : pattern, name)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

function glob(pattern: string, name: string): boolean {
  const source = pattern.toLowerCase().replace(/[.+^${}()|\\]/g, "\\$&")
    .replace(/\*/g, ".*").replace(/\?/g, ".").replace(/\[/g, "\\[").replace(
      /\]/g,
      "\\]",
    );
  return new RegExp(`^${source}$`).test(name.toLowerCase());
}

/**
 * Check the key a host presented against the known-hosts texts. A listed
 * key matches; a revoked one is refused; a host listed with another key of
 * the same type has `changed`; otherwise it is unknown.
 */
export function checkHostKey(
  files: readonly string[],
  host: string,
  port: number,
  blob: Uint8Array,
): HostKeyCheck {
  const name = hostName(host, port);
  const presented = btoa(String.fromCharCode(...blob));
  const type = keyType(blob);
  let listed: string | null = null;
  for (const text of files) {
    for (const entry of parseKnownHosts(text)) {
      if (entry.marker === "@revoked" && entry.key === presented) {
        return { status: "revoked" };
      }
    }
  }
  for (const text of files) {
    for (const entry of parseKnownHosts(text)) {
      if (entry.marker !== null || !names(entry, name)) continue;
      if (entry.key === presented) return { status: "known" };
      if (entry.type === type) listed ??= entry.key;
    }
  }
  if (listed === null) return { status: "unknown" };
  const bytes = Uint8Array.from(atob(listed), (c) => c.charCodeAt(0));
  return { status: "changed", listed: fingerprint(bytes) };
}

/** The known-hosts files' texts; a missing or unreadable file holds none. */
export function readKnownHosts(files: readonly string[]): Promise<string[]> {
  return Promise.all(
    files.map((file) => Deno.readTextFile(file).catch(() => "")),
  );
}

/** The command that trusts a connection's hop keys, for refusals' texts. */
export function trustCommand(connection: string): string {
  return `deno task dbport connections trust-host ${
    JSON.stringify(connection)
  }`;
}
