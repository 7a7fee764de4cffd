/**
 * A stable address: the first `serve` writes settings.json with every default
 * and the ports it chose; a restart binds them again, so an HTTP client's
 * saved URL and token and an open console tab keep working. A kept port that
 * is taken gives way for one start, said by serve and `client-config http`.
 */
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { DEFAULT_SETTINGS } from "../../lib/app/settings.ts";
import { mainArgs, ROOT, type ServeProcess, spawnServe } from "../_main.ts";
import { modernRequest, postModern } from "../_server.ts";

async function run(home: string, ...args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: mainArgs(...args),
    cwd: ROOT,
    env: { DBPORT_HOME: home, NO_COLOR: "1" },
    stdin: "null",
  }).output();
  return {
    code: output.code,
    out: new TextDecoder().decode(output.stdout),
    err: new TextDecoder().decode(output.stderr),
  };
}

async function stop(serve: ServeProcess): Promise<string> {
  serve.child.kill("SIGTERM");
  await serve.readRest();
  await serve.child.status;
  return await new Response(serve.child.stderr).text();
}

async function settingsFile(home: string) {
  return JSON.parse(await Deno.readTextFile(`${home}/settings.json`));
}

Deno.test("serve keeps its address: a saved URL, token and console tab work after a restart", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-stable-" });
  try {
    const first = await spawnServe(home);
    assert(first.url !== undefined, first.out);
    const kept = await settingsFile(home);
    // Every default, with the ports this start chose.
    assertEquals(
      Object.keys(kept).sort(),
      Object.keys(DEFAULT_SETTINGS).sort(),
    );
    assertEquals(first.url, `http://127.0.0.1:${kept.port}/mcp`);
    assert(kept.consolePort > 0);
    assertEquals(
      (await Deno.stat(`${home}/settings.json`)).mode! & 0o777,
      0o600,
    );
    assertEquals(
      (await Deno.stat(`${home}/console.secret`)).mode! & 0o777,
      0o600,
    );
    // An HTTP client saves its URL and token; a browser tab opens the console.
    const config = await run(home, "client-config", "http");
    assertEquals(config.code, 0, config.err);
    const url = /Endpoint: (\S+)/.exec(config.out)![1]!;
    const token = /(dbp_\S+)/.exec(config.out)![1]!;
    assertEquals(url, first.url);
    const handshake = JSON.parse(
      await Deno.readTextFile(`${home}/mcp-handshake.json`),
    );
    const login = await fetch(
      `http://127.0.0.1:${kept.consolePort}${handshake.console.path}/?key=${handshake.console.key}`,
      { redirect: "manual" },
    );
    await login.body?.cancel();
    assertEquals(login.status, 303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    await stop(first);

    const second = await spawnServe(home);
    try {
      assertEquals(second.url, url);
      const answer = await postModern(url, modernRequest("server/discover"), {
        authorization: `Bearer ${token}`,
      });
      assertEquals(answer.status, 200);
      const page = await fetch(
        `http://127.0.0.1:${kept.consolePort}${handshake.console.path}/`,
        { headers: { cookie } },
      );
      await page.body?.cancel();
      assertEquals(page.status, 200, "the open tab's session survives");
      assertEquals(await settingsFile(home), kept);
    } finally {
      await stop(second);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve: a kept port that is taken gives way for one start, said by serve and client-config http", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-stable-" });
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (taken.addr as Deno.NetAddr).port;
  try {
    assertEquals(
      (await run(home, "settings", "set", "port", `${port}`)).code,
      0,
    );
    const serve = await spawnServe(home);
    try {
      assert(serve.url !== undefined, serve.out);
      assert(serve.url !== `http://127.0.0.1:${port}/mcp`);
      const config = await run(home, "client-config", "http");
      assertEquals(config.code, 0, config.err);
      assertStringIncludes(config.out, `Endpoint: ${serve.url}`);
      assertStringIncludes(
        config.out,
        `Port ${port} ("port" in settings.json) was in use`,
      );
    } finally {
      const stderr = await stop(serve);
      assertStringIncludes(
        stderr,
        `127.0.0.1:${port} ("port" in settings.json) is in use`,
      );
    }
    // The user's port stays in the file.
    assertEquals((await settingsFile(home)).port, port);
  } finally {
    taken.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve: a port set to 0 keeps meaning a new port at each start", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-stable-" });
  try {
    await Deno.writeTextFile(`${home}/settings.json`, '{"port": 0}');
    const serve = await spawnServe(home);
    await stop(serve);
    const kept = await settingsFile(home);
    assertEquals(kept.port, 0);
    assert(kept.consolePort > 0, "the absent console port is chosen once");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("settings set validates like the file does and saves", async () => {
  const home = await Deno.makeTempDir({ prefix: "dbport-stable-" });
  try {
    const unknown = await run(home, "settings", "set", "prot", "1");
    assertEquals(unknown.code, 1);
    assertStringIncludes(unknown.err, 'Unknown setting "prot" (known: port,');
    const bad = await run(home, "settings", "set", "port", "abc");
    assertEquals(bad.code, 1);
    assertStringIncludes(bad.err, '"port" must be an integer from 0 to 65535');
    const limits = await run(
      home,
      "settings",
      "set",
      "defaultRowLimit",
      "20000",
    );
    assertEquals(limits.code, 1);
    assertStringIncludes(limits.err, 'exceeds "maxRowLimit"');
    assertEquals(
      await Deno.stat(`${home}/settings.json`).catch(() => null),
      null,
      "nothing saved",
    );
    const good = await run(home, "settings", "set", "port", "8765");
    assertEquals(good.code, 0, good.err);
    const dialog = await run(home, "settings", "set", "hostDialog", "terminal");
    assertEquals(dialog.code, 0, dialog.err);
    assertEquals(await settingsFile(home), {
      port: 8765,
      hostDialog: "terminal",
    });
    const shown = await run(home, "settings");
    assertStringIncludes(shown.out, '"port": 8765');
    const usage = await run(home, "settings", "set", "port");
    assertEquals(usage.code, 2);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
