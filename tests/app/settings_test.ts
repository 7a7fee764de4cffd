import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import {
  DEFAULT_SETTINGS,
  loadSettings,
  parseSettings,
} from "../../lib/app/settings.ts";

Deno.test("parseSettings() defaults every key", () => {
  assertEquals(parseSettings("{}"), {
    ok: true,
    settings: {
      ...DEFAULT_SETTINGS,
      allowedOrigins: ["https://claude.ai", "https://chatgpt.com"],
    },
  });
  assertEquals(parseSettings("").ok, true);
  assertEquals(DEFAULT_SETTINGS.requireAuth, true);
  assertEquals(DEFAULT_SETTINGS.defaultRowLimit, 500);
  assertEquals(DEFAULT_SETTINGS.maxRowLimit, 10000);
  assertEquals(DEFAULT_SETTINGS.queryTimeoutSeconds, 30);
  assertEquals(DEFAULT_SETTINGS.port, 0);
  assertEquals(DEFAULT_SETTINGS.enabled, true);
  assertEquals(DEFAULT_SETTINGS.queryHistory, true);
  assertEquals(DEFAULT_SETTINGS.approvalTimeoutSeconds, 120);
  assertEquals(DEFAULT_SETTINGS.console, true);
  assertEquals(DEFAULT_SETTINGS.hostDialog, "auto");
});

Deno.test("parseSettings() reads every known key", () => {
  const settings = {
    port: 23508,
    requireAuth: false,
    allowedOrigins: ["https://app.example"],
    defaultRowLimit: 100,
    maxRowLimit: 1000,
    queryTimeoutSeconds: 60,
    hostDialog: { command: ["/usr/bin/approve", "--json"] },
    enabled: false,
    queryHistory: false,
    maxResultBytes: 2_000_000,
    maxCellChars: 5_000,
    maxDiscoveryBytes: 30_000,
    previewTimeoutSeconds: 2,
    approvalTimeoutSeconds: 30,
    maxAnswerChars: 80_000,
    exportDirectory: "/srv/exports",
    maxExportRows: 1_000,
    maxExportBytes: 1_000_000,
    maxExportTotalBytes: 5_000_000,
    console: false,
    consolePort: 23509,
  };
  assertEquals(parseSettings(JSON.stringify(settings)), { ok: true, settings });
});

Deno.test("parseSettings() holds the answer budget and export settings to their ranges", () => {
  assertEquals(DEFAULT_SETTINGS.maxAnswerChars, 40_000);
  assertEquals(DEFAULT_SETTINGS.exportDirectory, null);
  for (
    const [text, problem] of [
      ['{"maxAnswerChars": 999}', '"maxAnswerChars" must be an integer'],
      [
        '{"maxAnswerChars": 2000000}',
        '"maxAnswerChars" (2000000) exceeds "maxResultBytes" (1000000)',
      ],
      ['{"exportDirectory": "exports"}', "must be null or an absolute path"],
      ['{"maxExportRows": 0}', '"maxExportRows" must be an integer'],
      ['{"maxExportBytes": "2G"}', '"maxExportBytes" must be an integer'],
    ]
  ) {
    const parsed = parseSettings(text!);
    assertEquals(parsed.ok, false, text);
    if (!parsed.ok) assert(parsed.message.includes(problem!), parsed.message);
  }
  // The default answer budget yields to a smaller byte budget.
  const small = parseSettings('{"maxResultBytes": 20000}');
  assertEquals(small.ok, true);
});

Deno.test("parseSettings() rejects unknown keys, naming them", () => {
  const result = parseSettings('{"prot": 1, "colour": 2}');
  assertEquals(result.ok, false);
  if (!result.ok) {
    assertStringIncludes(result.message, '"prot"');
    assertStringIncludes(result.message, '"colour"');
  }
});

Deno.test("parseSettings() rejects ill-typed values, quoting the value", () => {
  const cases: [string, string][] = [
    ['{"port": 70000}', '"port"'],
    ['{"port": "80"}', '"port"'],
    ['{"requireAuth": "yes"}', '"requireAuth"'],
    ['{"allowedOrigins": "https://claude.ai"}', '"allowedOrigins"'],
    [
      '{"allowedOrigins": ["https://claude.ai/path"]}',
      "https://claude.ai/path",
    ],
    ['{"queryTimeoutSeconds": 0}', '"queryTimeoutSeconds"'],
    ['{"hostDialog": "maybe"}', '"hostDialog"'],
    ['{"hostDialog": {"command": []}}', '"hostDialog"'],
    ['{"approvalTimeoutSeconds": 0}', '"approvalTimeoutSeconds"'],
    ['{"console": "yes"}', '"console"'],
    ['{"consolePort": 70000}', '"consolePort"'],
    ['{"defaultRowLimit": 600, "maxRowLimit": 500}', '"defaultRowLimit"'],
    ["[1]", "JSON object"],
    ["{", "Cannot parse"],
  ];
  for (const [text, expected] of cases) {
    const result = parseSettings(text);
    assertEquals(result.ok, false, text);
    if (!result.ok) assertStringIncludes(result.message, expected);
  }
});

Deno.test("loadSettings() treats a missing file as the defaults", async () => {
  const result = await loadSettings("/nonexistent/dbport/settings.json");
  assertEquals(result.ok, true);
});
