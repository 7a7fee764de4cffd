/**
 * The layer rules of docs/development.md, kept by the machine: the import
 * graph as `deno info --json` resolves it (static, dynamic and type-only
 * imports alike) from main.ts, bridge.ts and every file under lib/.
 *
 * A rule that does not hold yet is listed in {@linkcode KNOWN} with the exact
 * violation. The list can only shrink: a listed violation that no longer
 * exists fails the test too, so whoever mends one also strikes it here.
 */
import { assertEquals } from "@std/assert";
import { E2E_DIRS, E2E_FILES, testFiles, tierOf } from "./tiers.ts";

const ROOT = new URL("../", import.meta.url);

/**
 * Violations that exist today, each to be struck when it is mended. Empty
 * since issue 35; a new entry needs a reason the reviewer accepts.
 */
const KNOWN: readonly string[] = [];

/** Each file's imports, as repository paths ("lib/db/pool.ts"). */
type Graph = Map<string, Set<string>>;

interface InfoModule {
  specifier: string;
  dependencies?: {
    code?: { specifier?: string };
    type?: { specifier?: string };
  }[];
}

async function sourceFiles(dir: URL, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${prefix}${entry.name}`;
    if (entry.isDirectory) {
      found.push(
        ...await sourceFiles(new URL(`${entry.name}/`, dir), `${path}/`),
      );
    } else if (/\.tsx?$/.test(entry.name)) {
      found.push(path);
    }
  }
  return found.sort();
}

/** The graph `deno info --json` resolves from main.ts, bridge.ts and lib/. */
async function importGraph(): Promise<Graph> {
  const roots = [
    "main.ts",
    "bridge.ts",
    ...await sourceFiles(new URL("lib/", ROOT), "lib/"),
  ];
  // One module importing every root: one `deno info` instead of 200.
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      entry,
      roots.map((path) => `import "${new URL(path, ROOT).href}";\n`).join(""),
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "info",
        "--json",
        "--config",
        new URL("deno.dev.json", ROOT).pathname,
        entry,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(
        `deno info failed: ${new TextDecoder().decode(output.stderr)}`,
      );
    }
    const info: { modules: InfoModule[] } = JSON.parse(
      new TextDecoder().decode(output.stdout),
    );
    const local = (specifier: string | undefined) =>
      specifier?.startsWith(ROOT.href)
        ? specifier.slice(ROOT.href.length)
        : null;
    const graph: Graph = new Map();
    for (const module of info.modules) {
      const from = local(module.specifier);
      if (from === null) continue;
      const to = new Set<string>();
      for (const dependency of module.dependencies ?? []) {
        for (const target of [dependency.code, dependency.type]) {
          const path = local(target?.specifier);
          if (path !== null) to.add(path);
        }
      }
      graph.set(from, to);
    }
    return graph;
  } finally {
    await Deno.remove(entry);
  }
}

/** The floor a file lives on: "protocol", "db", … or "bridge" for bridge.ts. */
function layerOf(path: string): string {
  if (path === "bridge.ts") return "bridge";
  const parts = path.split("/");
  return parts[0] === "lib" && parts.length > 2 ? parts[1]! : path;
}

/** What each floor may not import; `only` lists the floors it may import. */
const RULES: readonly {
  from: string;
  only?: readonly string[];
  never?: readonly string[];
  name: string;
}[] = [
  { from: "protocol", only: ["protocol", "base"], name: "protocol is pure" },
  { from: "base", only: ["base"], name: "base is the ground floor" },
  {
    from: "bridge",
    only: ["bridge", "protocol", "base"],
    name: "bridge stays apart",
  },
  {
    from: "db",
    never: ["features", "server", "app", "cli", "console"],
    name: "db imports",
  },
  {
    from: "features",
    never: ["server", "cli", "console"],
    name: "features imports",
  },
  { from: "server", never: ["cli", "console"], name: "server imports" },
  {
    from: "app",
    never: ["features", "server", "cli", "console"],
    name: "app imports",
  },
  { from: "console", never: ["cli"], name: "console imports" },
];

function layerViolations(graph: Graph): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const layer = layerOf(from);
    for (const to of targets) {
      if (!to.startsWith("lib/")) continue;
      const target = layerOf(to);
      for (const rule of RULES) {
        if (rule.from !== layer) continue;
        const broken = rule.only !== undefined
          ? !rule.only.includes(target)
          : rule.never?.includes(target) === true;
        if (broken) {
          found.push(
            rule.only !== undefined
              ? `${rule.name}: ${from} -> ${to}`
              : `${layer} imports ${target}: ${from} -> ${to}`,
          );
        }
      }
    }
  }
  return found;
}

/**
 * The public faces the server and the console reach the tools through:
 * `approval.ts` for the write gate (consent, a write's preview and how it
 * reads) and `discovery.ts` for what the console's Schema page shares with
 * the discovery tools (their page size). Two faces rather than one: listing
 * tables never reaches the write gate, so the gate's face stays about the
 * gate alone.
 */
const FACES: readonly string[] = [
  "lib/features/approval.ts",
  "lib/features/discovery.ts",
];

/**
 * The write gate and the tools are reached from above through their
 * {@linkcode FACES}: the server and the console import neither
 * `consent.ts` nor anything of `lib/features/tools/`.
 */
function gateViolations(graph: Graph): string[] {
  const found: string[] = [];
  for (const face of FACES) {
    if (!graph.has(face)) found.push(`face missing: ${face}`);
  }
  for (const [from, targets] of graph) {
    if (!["server", "console"].includes(layerOf(from))) continue;
    for (const to of targets) {
      if (
        to === "lib/features/consent.ts" ||
        to.startsWith("lib/features/tools/")
      ) {
        found.push(`write gate reached past its face: ${from} -> ${to}`);
      }
    }
  }
  return found;
}

/** Strongly connected components of more than one file (Tarjan). */
function cycles(graph: Graph): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    if (component.length > 1 || graph.get(node)?.has(node)) {
      found.push(`cycle: ${component.sort().join(", ")}`);
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/**
 * Engine differences live in lib/db/: a comparison of a value with an
 * engine's name anywhere else gives every other engine the `else` branch.
 */
async function engineComparisons(graph: Graph): Promise<string[]> {
  const found: string[] = [];
  const pattern =
    /[!=]==?\s*"(?:postgres|mysql|sqlite|libsql)"|case\s+"(?:postgres|mysql|sqlite|libsql)"\s*:/;
  for (const path of graph.keys()) {
    if (path.startsWith("lib/db/") || !/\.tsx?$/.test(path)) continue;
    const lines = (await Deno.readTextFile(new URL(path, ROOT))).split("\n");
    lines.forEach((line, at) => {
      if (pattern.test(line)) {
        found.push(`engine compared outside lib/db/: ${path}:${at + 1}`);
      }
    });
  }
  return found;
}

Deno.test("the house keeps its layer rules, reaches the write gate through its face, has no import cycle and compares engines only in lib/db/", async () => {
  const graph = await importGraph();
  // The graph was read: the composition reaches the database layer.
  assertEquals(graph.has("lib/db/pool.ts"), true);
  const violations = [
    ...layerViolations(graph),
    ...gateViolations(graph),
    ...cycles(graph),
    ...await engineComparisons(graph),
  ].sort();
  const known = new Set(KNOWN);
  assertEquals(
    violations.filter((violation) => !known.has(violation)),
    [],
    "new violations of the layer rules (docs/development.md)",
  );
  assertEquals(
    KNOWN.filter((violation) => !violations.includes(violation)),
    [],
    "mended: strike these from KNOWN in tests/architecture_test.ts",
  );
});

/**
 * What `serve` loads only at a first use, never at start (docs/performance.md
 * "Memory"): the features (tools, prompts, resources, the SQL classifier),
 * each engine's driver and its packages, the grant planners of private
 * columns, the demo shop, the console's pages, the CLI's commands, and the
 * Hono app with its node:http adapter (the `POST /mcp` fast path answers
 * without them).
 */
const LAZY: readonly string[] = [
  "lib/server/app.ts",
  "npm:hono",
  "npm:@hono/node-server",
  "lib/features/index.ts",
  "lib/features/tools/index.ts",
  "lib/features/prompts/",
  "lib/features/resources/",
  "lib/db/sql/classifier.ts",
  "lib/db/postgres/",
  "lib/db/mysql/",
  "lib/db/sqlite/",
  "lib/db/ssh/tunnel.ts",
  "lib/app/private_sync.ts",
  "lib/app/harden_private.ts",
  "lib/app/demo_db.ts",
  "lib/console/app.tsx",
  "lib/console/pages/",
  "lib/cli/connections.ts",
  "lib/cli/tokens.ts",
  "npm:postgres",
  "npm:mysql2",
  "npm:libsql",
  "npm:@libsql/client",
  "npm:libpg-query",
  "npm:ssh2",
  "npm:puppeteer",
];

/**
 * The modules `main.ts` loads before it runs: its static imports and theirs,
 * as repository paths or npm specifiers (dynamic and type-only imports left
 * out).
 */
async function startupGraph(): Promise<Set<string>> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "info",
      "--json",
      "--config",
      new URL("deno.dev.json", ROOT).pathname,
      new URL("main.ts", ROOT).pathname,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `deno info failed: ${new TextDecoder().decode(output.stderr)}`,
    );
  }
  const info: {
    roots: string[];
    modules: (InfoModule & {
      dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[];
    })[];
  } = JSON.parse(new TextDecoder().decode(output.stdout));
  const byUrl = new Map(info.modules.map((m) => [m.specifier, m]));
  const name = (specifier: string) =>
    specifier.startsWith(ROOT.href)
      ? specifier.slice(ROOT.href.length)
      : specifier;
  const loaded = new Set<string>();
  const queue = [...info.roots];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    if (loaded.has(name(next))) continue;
    loaded.add(name(next));
    for (const dependency of byUrl.get(next)?.dependencies ?? []) {
      const target = dependency.code?.specifier;
      if (target !== undefined && dependency.isDynamic !== true) {
        queue.push(target);
      }
    }
  }
  return loaded;
}

Deno.test("serve's start-up graph leaves out what only a first use needs", async () => {
  const loaded = await startupGraph();
  // The graph was read: the server and its listener are in it.
  assertEquals(
    ["lib/serve.ts", "lib/server/listener.ts"].filter((m) => !loaded.has(m)),
    [],
  );
  assertEquals(
    [...loaded].filter((module) =>
      LAZY.some((lazy) =>
        lazy.endsWith("/") ? module.startsWith(lazy) : module === lazy ||
          module.startsWith(`${lazy}@`) || module.startsWith(`${lazy}/`)
      )
    ).sort(),
    [],
    'imported at start: load these at their first use (docs/performance.md "Memory")',
  );
});

Deno.test("serve's start-up modules are Latin-1 text", async () => {
  // One character past U+00FF (a dash or an ellipsis in a comment) makes V8
  // keep the module's whole source, and the inline source map Deno appends
  // to it, at two bytes a character for the life of the process: in a
  // string, write it as an escape ("\\u2026"); in a comment, in ASCII.
  const wide: string[] = [];
  for (const module of await startupGraph()) {
    if (!/^(lib\/|main\.ts$)/.test(module)) continue;
    const text = await Deno.readTextFile(new URL(module, ROOT));
    const at = text.search(/[\u0100-\uffff]/);
    if (at >= 0) {
      wide.push(`${module}:${text.slice(0, at).split("\n").length}`);
    }
  }
  assertEquals(wide, [], 'past U+00FF (docs/performance.md "Memory")');
});

Deno.test("every test file lands in exactly one tier; the end-to-end list names files that exist outside the end-to-end folders", async () => {
  const files = await testFiles(ROOT);
  const unit = files.filter((path) => tierOf(path) === "unit");
  const e2e = files.filter((path) => tierOf(path) === "e2e");
  assertEquals(unit.length + e2e.length, files.length);
  assertEquals(unit.filter((path) => e2e.includes(path)), []);
  assertEquals(
    E2E_FILES.filter((path) =>
      !files.includes(path) || E2E_DIRS.some((dir) => path.startsWith(dir))
    ),
    [],
    "stale or needless entries in E2E_FILES (tests/tiers.ts)",
  );
  // The fast tier holds this test and the tiers' own check.
  assertEquals(tierOf("tests/architecture_test.ts"), "unit");
});
