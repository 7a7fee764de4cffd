/**
 * `dbport client-config`: the snippets parse, name the bridge by absolute
 * path, and the http one carries a fresh token of the chosen level that the
 * running server accepts.
 */

import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { openStateDb } from "../../lib/app/state_db.ts";
import {
  bridgeLaunch,
  clientConfigCommand,
  CLIENTS,
  stdioSnippet,
} from "../../lib/cli/client_config.ts";
import { BRIDGE, BRIDGE_PERMISSIONS } from "../../lib/cli/integration.ts";
import { UsageError } from "../../lib/cli/io.ts";
import { modernRequest, postModern, startTestServer } from "../_server.ts";

/** The JSON object a snippet shows (the first `{` to the matching end). */
function snippetJson(text: string): Record<string, unknown> {
  const start = text.indexOf("\n{");
  const end = text.indexOf("\n}", start);
  return JSON.parse(text.slice(start + 1, end + 2));
}

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) },
    text: () => out.join("\n"),
  };
}

Deno.test("bridgeLaunch() runs this checkout's bridge with deno as found on the PATH, passing DBPORT_HOME on", async () => {
  const bin = await Deno.makeTempDir();
  try {
    // deno on the PATH as a symlink: the link is written, not its target.
    await Deno.symlink(Deno.execPath(), `${bin}/deno`);
    const launch = await bridgeLaunch((name) =>
      ({ DBPORT_HOME: "/data/dbport", HOME: "/nonexistent", PATH: bin })[name]
    );
    if (launch.args.length > 0) {
      assertEquals(launch.command, `${bin}/deno`);
      assertEquals(launch.args, ["run", ...BRIDGE_PERMISSIONS, BRIDGE]);
      assert(BRIDGE.startsWith("/"));
    } else {
      // A compiled dist/dbport-mcp of this checkout.
      assert(launch.command.endsWith("/dist/dbport-mcp"), launch.command);
    }
    assertEquals(launch.env, { DBPORT_HOME: "/data/dbport" });
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
});

Deno.test("bridgeLaunch() names dbport-mcp alone once it is installed on the PATH", async () => {
  const bin = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${bin}/dbport-mcp`, "#!/bin/sh\n", {
      mode: 0o755,
    });
    const launch = await bridgeLaunch((name) =>
      ({ HOME: "/nonexistent", PATH: `/nowhere:${bin}` })[name]
    );
    assertEquals(launch, { command: "dbport-mcp", args: [], env: {} });
    // Installed under DENO_INSTALL_ROOT but not on the PATH: by its path.
    const root = await Deno.makeTempDir();
    await Deno.mkdir(`${root}/bin`);
    await Deno.copyFile(`${bin}/dbport-mcp`, `${root}/bin/dbport-mcp`);
    const off = await bridgeLaunch((name) =>
      ({ HOME: "/nonexistent", PATH: "/nowhere", DENO_INSTALL_ROOT: root })[
        name
      ]
    );
    assertEquals(off.command, `${root}/bin/dbport-mcp`);
    await Deno.remove(root, { recursive: true });
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
});

Deno.test("stdioSnippet() gives each desktop client its own shape", () => {
  const launch = { command: "/opt/dbport-mcp", args: [], env: {} };
  const desktop = snippetJson(stdioSnippet("claude-desktop", launch));
  assertEquals(desktop, {
    mcpServers: { dbport: { command: "/opt/dbport-mcp", args: [] } },
  });
  assertEquals(snippetJson(stdioSnippet("cursor", launch)), desktop);
  assertEquals(snippetJson(stdioSnippet("vscode", launch)), {
    servers: {
      dbport: { type: "stdio", command: "/opt/dbport-mcp", args: [] },
    },
  });
  const code = stdioSnippet("claude-code", {
    command: "/opt/my tools/deno",
    args: ["run", "/x/bridge.ts"],
    env: { DBPORT_HOME: "/data" },
  });
  assertStringIncludes(
    code,
    "claude mcp add --scope user -e DBPORT_HOME=/data dbport -- '/opt/my tools/deno' run /x/bridge.ts",
  );
});

Deno.test("client-config http mints a token of the chosen level that the running server accepts", async () => {
  await using t = await startTestServer();
  const out = capture();
  const code = await clientConfigCommand(
    t.home,
    () => openStateDb(t.home),
    ["http", "--level", "readWrite", "--name", "ci"],
    out.io,
  );
  assertEquals(code, 0);
  const config = snippetJson(out.text()) as {
    mcpServers: { dbport: { url: string; headers: { Authorization: string } } };
  };
  assertEquals(config.mcpServers.dbport.url, t.url);
  const authorization = config.mcpServers.dbport.headers.Authorization;
  assertStringIncludes(out.text(), "Token (readWrite;");
  await t.server.syncTokens();
  const tokens = await t.server.tokens.list();
  const minted = tokens.find((token) => token.name === "ci");
  assertEquals(minted?.level, "readWrite");
  const answer = await postModern(t.url, modernRequest("tools/list"), {
    authorization,
  });
  assertEquals(answer.status, 200);
  // The port was chosen at start: the snippet says to fix it.
  assertStringIncludes(out.text(), 'set a fixed "port"');
});

Deno.test("client-config refuses an unknown client, token flags on a bridge client, and a bad level", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-ccfg-" });
  try {
    const run = (args: string[]) =>
      clientConfigCommand(home, () => openStateDb(home), args, capture().io);
    const unknown = await assertRejects(() => run(["zed"]), UsageError);
    assertStringIncludes(unknown.message, CLIENTS.join(", "));
    const flag = await assertRejects(
      () => run(["cursor", "--level", "readWrite"]),
      UsageError,
    );
    assertStringIncludes(flag.message, '--level is for "http" only');
    const level = await assertRejects(
      () => run(["http", "--level", "root"]),
      UsageError,
    );
    assertStringIncludes(level.message, '"root"');
    const down = await assertRejects(() => run(["http"]), UsageError);
    assertStringIncludes(down.message, "not running");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
