import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import {
  describeDialog,
  type DialogEnv,
  dialogFor,
  type DialogRequest,
  dialogText,
  windowsDialog,
} from "../../lib/app/host_dialog.ts";
import { BRIDGE_TOKEN_NAME } from "../../lib/base/identity.ts";

const request: DialogRequest = {
  kind: "destructive",
  connection: { id: "c1", name: "Shop" },
  client: "Claude",
  token: "laptop",
  statement: "DROP TABLE orders",
  safeMode: "alert",
  message: 'Allow a destructive statement on "Shop"?',
  reasons: ["the statement drops or truncates data"],
};

const signal = new AbortController().signal;

function env(overrides: Partial<DialogEnv>): DialogEnv {
  return {
    os: "linux",
    terminal: false,
    display: false,
    has: () => false,
    ...overrides,
  };
}

Deno.test("dialogFor() a command gets the request as JSON and exit code 0 approves", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const log = `${dir}/in.json`;
    const approve = dialogFor({ command: ["sh", "-c", `cat > "$0"`, log] });
    assertEquals(await approve.ask(request, signal), { answer: "approve" });
    assertEquals(JSON.parse(await Deno.readTextFile(log)), request);
    const deny = dialogFor({ command: ["sh", "-c", "exit 3"] });
    assertEquals(await deny.ask(request, signal), { answer: "deny" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dialogFor() a command that cannot start is unavailable, never an approval", async () => {
  const missing = dialogFor({ command: ["/nonexistent/dbport-approver"] });
  const answer = await missing.ask(request, signal);
  assertEquals(answer.answer, "unavailable");
});

Deno.test('dialogFor() "deny", and "auto" with no terminal and no desktop, refuse', async () => {
  for (const setting of ["deny", "auto", "os", "terminal"] as const) {
    const answer = await dialogFor(setting, env({})).ask(request, signal);
    assertEquals(answer.answer, "unavailable", setting);
  }
});

Deno.test("dialogFor() the desktop dialog: Allow, Deny, and a time-out as dismissed", async () => {
  const dir = await Deno.makeTempDir();
  const path = Deno.env.get("PATH") ?? "";
  try {
    Deno.env.set("PATH", `${dir}:${path}`);
    for (
      const [code, answer] of [
        [0, "approve"],
        [1, "deny"],
        [5, "dismissed"],
      ] as const
    ) {
      await Deno.writeTextFile(`${dir}/zenity`, `#!/bin/sh\nexit ${code}\n`, {
        mode: 0o755,
      });
      const dialog = dialogFor(
        "auto",
        env({ display: true, has: (p) => p === "zenity" }),
      );
      assertEquals(await dialog.ask(request, signal), { answer }, String(code));
    }
  } finally {
    Deno.env.set("PATH", path);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dialogText() names the client, the reasons and the statement", () => {
  assertEquals(
    dialogText(request),
    'Allow a destructive statement on "Shop"?\nClient: Claude (token "laptop")\nBecause the statement drops or truncates data.\n\nDROP TABLE orders',
  );
});

Deno.test("dialogText() says a bridge client came through the stdio bridge, not the bridge token's internal name", () => {
  const text = dialogText({ ...request, token: BRIDGE_TOKEN_NAME });
  assertEquals(
    text.split("\n")[1],
    "Client: Claude (through the stdio bridge)",
  );
  assertEquals(text.includes(BRIDGE_TOKEN_NAME), false);
});

Deno.test("dialogText() puts a write's preview line before the statement", () => {
  assertEquals(
    dialogText({ ...request, previewLine: "Removes orders with 1,204 rows" }),
    'Allow a destructive statement on "Shop"?\nClient: Claude (token "laptop")\nBecause the statement drops or truncates data.\nRemoves orders with 1,204 rows\n\nDROP TABLE orders',
  );
});

Deno.test("describeDialog() says where serve will ask", () => {
  assertEquals(
    describeDialog("auto", env({ terminal: true })),
    "asked on this terminal",
  );
  assertEquals(
    describeDialog("auto", env({ display: true, has: (p) => p === "kdialog" })),
    "a kdialog dialog",
  );
  assertEquals(
    describeDialog("auto", env({})),
    'refused: no terminal, no desktop dialog and no console (set "hostDialog")',
  );
  assertEquals(
    describeDialog("auto", env({}), "http://127.0.0.1:4000/"),
    "on the console's Approvals page, http://127.0.0.1:4000/ (no terminal or desktop dialog here)",
  );
  assertEquals(
    describeDialog(
      "console",
      env({ terminal: true }),
      "http://127.0.0.1:4000/",
    ),
    "on the console's Approvals page, http://127.0.0.1:4000/",
  );
  assertEquals(
    describeDialog("console", env({})),
    "refused: the console is off",
  );
  assertEquals(
    describeDialog({ command: ["/usr/local/bin/approve"] }),
    'the command "/usr/local/bin/approve" (hostDialog)',
  );
});

Deno.test("windowsDialog() never puts the request into PowerShell's script: quotes, backticks, $(...) and line breaks cannot break out", () => {
  const hostile = {
    ...request,
    client: "x'; Remove-Item C:\\ -Recurse; '",
    statement:
      "UPDATE t SET a = '\"`$(Start-Process calc)`' -- ' ; exit 0\r\nDELETE FROM t; \u00e9\u65e5\u{1F600}",
  };
  const benign = windowsDialog(request);
  const attacked = windowsDialog(hostile);
  // The script and its arguments are the same whatever the request says.
  assertEquals(attacked.argv, benign.argv);
  for (const part of attacked.argv) {
    assert(!part.includes("calc") && !part.includes("Remove-Item"), part);
  }
  // The text travels on stdin as base64 of its UTF-8, and arrives whole.
  assert(/^[A-Za-z0-9+/=]+\n$/.test(attacked.input));
  const bytes = Uint8Array.from(
    atob(attacked.input.trim()),
    (c) => c.charCodeAt(0),
  );
  assertEquals(new TextDecoder().decode(bytes), dialogText(hostile));
});

Deno.test("dialogFor() on Windows asks with a message box when PowerShell is there", () => {
  const windows = env({ os: "windows", has: (p) => p === "powershell.exe" });
  assertEquals(describeDialog("os", windows), "a Windows message box");
  assertEquals(describeDialog("auto", windows), "a Windows message box");
  assertEquals(
    describeDialog("os", env({ os: "windows" })),
    "refused: no desktop dialog",
  );
});

Deno.test('dialogFor() "console" asks the console; "auto" falls back to it only with no terminal and no desktop dialog', async () => {
  const asked: string[] = [];
  const browser = {
    ask: (r: DialogRequest) => {
      asked.push(r.message);
      return Promise.resolve({ answer: "approve" as const });
    },
  };
  assertEquals(
    await dialogFor("console", env({ terminal: true }), browser).ask(
      request,
      signal,
    ),
    { answer: "approve" },
  );
  assertEquals(
    await dialogFor("auto", env({}), browser).ask(request, signal),
    { answer: "approve" },
  );
  assertEquals(asked.length, 2);
  const off = await dialogFor("console", env({}), null).ask(request, signal);
  assertEquals(off.answer, "unavailable");
  const none = await dialogFor("auto", env({}), null).ask(request, signal);
  assertEquals(none.answer, "unavailable");
  assertStringIncludes(
    (none as { why: string }).why,
    "no terminal, no desktop dialog and no console",
  );
});
