/**
 * `deno task mutate`: dbport's own mutation runner (issue 34, docs/development.md
 * "Mutation scores"). Each mutant is one small break of a module's code — a
 * comparison or logical operator swapped, a boolean return flipped, a boolean
 * function made constant, an entry dropped from a list or a regex
 * alternation, a number moved by one, a `!` removed — made at code positions
 * only (the TypeScript parser tells code from comments, strings and template
 * text). Each mutant runs the module's mapped tests (scripts/mutate_map.json:
 * unit tests first, then e2e tests, stopping at the first failure), one
 * mutant at a time, in a copy of the repository: the worktree is never
 * edited, so Ctrl-C or a crash cannot leave a mutant behind.
 *
 *   deno task mutate                          every mapped module
 *   deno task mutate lib/db/redact.ts         one module (or several)
 *   deno task mutate --list lib/db/redact.ts  the mutants, without running
 *   options: --cap N (mutants per module, default 40), --seed N (default 34)
 *
 * A survivor the type checker rejects is reported apart ("killed by the type
 * checker"): it is no program, and neither noticed by tests nor counted. A
 * survivor listed in scripts/mutate_equivalents.json (it changes nothing
 * observable) is left out of the score. The score is the share of the rest
 * that the tests noticed; a mutant whose tests outlive the timeout counts as
 * noticed, and is said so.
 *
 * @module
 */

import ts from "typescript";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MAP_FILE = join(ROOT, "scripts", "mutate_map.json");
const EQUIVALENTS_FILE = join(ROOT, "scripts", "mutate_equivalents.json");

/** One module's tests: fast unit tests first, then e2e tests. */
interface Mapped {
  unit: string[];
  e2e: string[];
}

/** A survivor judged to change nothing observable. */
interface Equivalent {
  file: string;
  line: number;
  column: number;
  edit: string;
  why: string;
}

/** One small break of a module: replace [start, end) with `text`. */
export interface Mutant {
  start: number;
  end: number;
  text: string;
  line: number;
  column: number;
  /** What changed, as `before → after`. */
  edit: string;
  operator: string;
}

type Outcome =
  | { kind: "killed"; by: string }
  | { kind: "timeout"; by: string }
  | { kind: "type" }
  | { kind: "equivalent"; why: string }
  | { kind: "survived" };

const SWAPS: Partial<Record<ts.SyntaxKind, string>> = {
  [ts.SyntaxKind.EqualsEqualsEqualsToken]: "!==",
  [ts.SyntaxKind.ExclamationEqualsEqualsToken]: "===",
  [ts.SyntaxKind.EqualsEqualsToken]: "!=",
  [ts.SyntaxKind.ExclamationEqualsToken]: "==",
  [ts.SyntaxKind.LessThanToken]: "<=",
  [ts.SyntaxKind.LessThanEqualsToken]: "<",
  [ts.SyntaxKind.GreaterThanToken]: ">=",
  [ts.SyntaxKind.GreaterThanEqualsToken]: ">",
  [ts.SyntaxKind.AmpersandAmpersandToken]: "||",
  [ts.SyntaxKind.BarBarToken]: "&&",
};

/** Every mutant of a module's source text. */
export function mutants(source: string, fileName = "x.ts"): Mutant[] {
  const file = ts.createSourceFile(
    fileName,
    source,
    ts.ScriptTarget.Latest,
    true,
    fileName.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: Mutant[] = [];
  const add = (
    operator: string,
    start: number,
    end: number,
    text: string,
  ) => {
    const before = source.slice(start, end);
    found.push({
      start,
      end,
      text,
      operator,
      ...position(start),
      edit: `${short(before)} → ${short(text)}`,
    });
  };
  const position = (offset: number) => {
    const { line, character } = file.getLineAndCharacterOfPosition(offset);
    return { line: line + 1, column: character + 1 };
  };
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node)) {
      const swap = SWAPS[node.operatorToken.kind];
      if (swap !== undefined) {
        add(
          "operator",
          node.operatorToken.getStart(),
          node.operatorToken.end,
          swap,
        );
      }
    } else if (
      ts.isReturnStatement(node) && node.expression !== undefined &&
      (node.expression.kind === ts.SyntaxKind.TrueKeyword ||
        node.expression.kind === ts.SyntaxKind.FalseKeyword)
    ) {
      const flipped = node.expression.kind === ts.SyntaxKind.TrueKeyword
        ? "false"
        : "true";
      add(
        "boolean return",
        node.expression.getStart(),
        node.expression.end,
        flipped,
      );
    } else if (ts.isArrayLiteralExpression(node) && !isAssignmentTarget(node)) {
      node.elements.forEach((element, index) => {
        const [start, end] = entryRange(node.elements, index, source);
        add("list entry", start, end, "");
        void element;
      });
    } else if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const start = node.getStart();
      for (const [from, to] of alternatives(node.getText())) {
        add("regex alternative", start + from, start + to, "");
      }
    } else if (
      ts.isNumericLiteral(node) && !ts.isLiteralTypeNode(node.parent)
    ) {
      const value = Number(node.text);
      const hex = /^0x/i.test(node.getText());
      const write = (n: number) =>
        n < 0 ? `(${n})` : hex ? `0x${n.toString(16)}` : String(n);
      add("number", node.getStart(), node.end, write(value + 1));
      add("number", node.getStart(), node.end, write(value - 1));
    } else if (
      ts.isPrefixUnaryExpression(node) &&
      node.operator === ts.SyntaxKind.ExclamationToken &&
      !(ts.isPrefixUnaryExpression(node.operand) &&
        node.operand.operator === ts.SyntaxKind.ExclamationToken) &&
      !(ts.isPrefixUnaryExpression(node.parent) &&
        node.parent.operator === ts.SyntaxKind.ExclamationToken)
    ) {
      add("negation", node.getStart(), node.operand.getStart(), "");
    }
    if (
      (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) ||
        ts.isArrowFunction(node) || ts.isFunctionExpression(node) ||
        ts.isGetAccessorDeclaration(node)) &&
      node.type?.kind === ts.SyntaxKind.BooleanKeyword &&
      node.body !== undefined && ts.isBlock(node.body)
    ) {
      for (const constant of ["true", "false"]) {
        found.push({
          start: node.body.getStart(),
          end: node.body.end,
          text: `{ return ${constant}; }`,
          operator: "boolean function",
          ...position(node.body.getStart()),
          edit: `${functionName(node)} body → { return ${constant}; }`,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function functionName(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined) return `${named.name.getText()}()`;
  if (ts.isVariableDeclaration(node.parent)) {
    return `${node.parent.name.getText()}()`;
  }
  return "function";
}

function isAssignmentTarget(node: ts.Node): boolean {
  const parent = node.parent;
  return ts.isBinaryExpression(parent) && parent.left === node &&
    parent.operatorToken.kind === ts.SyntaxKind.EqualsToken;
}

/** An element's text with one adjoining comma, so the rest stays valid. */
function entryRange(
  elements: ts.NodeArray<ts.Expression>,
  index: number,
  source: string,
): [number, number] {
  const element = elements[index]!;
  const start = element.getStart();
  const next = elements[index + 1];
  if (next !== undefined) return [start, next.getStart()];
  const previous = elements[index - 1];
  if (previous !== undefined) return [previous.end, element.end];
  // The only entry: keep a trailing comma out of the way too.
  let end = element.end;
  while (end < source.length && /\s/.test(source[end]!)) end++;
  return [start, source[end] === "," ? end + 1 : element.end];
}

/**
 * The alternatives of a regex literal's `a|b|c` groups, each as the range to
 * delete (the alternative and one `|` beside it), relative to the literal.
 */
export function alternatives(literal: string): [number, number][] {
  const body = literal.slice(0, literal.lastIndexOf("/") + 1);
  const ranges: [number, number][] = [];
  // Per open group: where each alternative starts, and the bars.
  const stack: { bars: number[]; start: number }[] = [{ bars: [], start: 1 }];
  const close = (group: { bars: number[]; start: number }, end: number) => {
    if (group.bars.length === 0) return;
    const cuts = [group.start - 1, ...group.bars, end];
    for (let k = 0; k + 1 < cuts.length; k++) {
      const from = cuts[k]! + 1;
      const to = cuts[k + 1]!;
      // The first alternative takes the bar after it; the others the bar before.
      ranges.push(k === 0 ? [from, to + 1] : [from - 1, to]);
    }
  };
  let inClass = false;
  for (let i = 1; i < body.length - 1; i++) {
    const c = body[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") {
      let start = i + 1;
      if (body[i + 1] === "?") {
        const lookaround = /^\?(?:[:=!]|<[=!]|<[A-Za-z_$][\w$]*>)/.exec(
          body.slice(i + 1),
        );
        start = i + 1 + (lookaround?.[0].length ?? 1);
      }
      stack.push({ bars: [], start });
    } else if (c === ")") {
      const group = stack.pop();
      if (group !== undefined && stack.length > 0) close(group, i);
      else if (group !== undefined) stack.push(group);
    } else if (c === "|") stack.at(-1)!.bars.push(i);
  }
  close(stack[0]!, body.length - 1);
  return ranges;
}

function short(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 60 ? `${flat.slice(0, 57)}…` : flat === "" ? "∅" : flat;
}

/** A small seeded generator (mulberry32): the same seed, the same sample. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Up to `cap` mutants, chosen by `seed`, in the order they were made. */
export function sample(all: Mutant[], cap: number, seed: number): Mutant[] {
  const next = random(seed);
  const order = all.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order.slice(0, cap).sort((a, b) => a - b).map((i) => all[i]!);
}

interface Run {
  failed: boolean;
  timedOut: boolean;
  ms: number;
}

/** `deno test` over `files` in `cwd`, killed (its whole group) after `timeoutMs`. */
async function runTests(
  cwd: string,
  files: string[],
  timeoutMs: number,
): Promise<Run> {
  const started = performance.now();
  const child = new Deno.Command("setsid", {
    args: [
      Deno.execPath(),
      "test",
      "--config",
      "deno.dev.json",
      "--no-prompt",
      "--allow-all",
      "--no-check",
      "--fail-fast",
      ...files,
    ],
    cwd,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  running = child;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, timeoutMs);
  const status = await child.status;
  clearTimeout(timer);
  running = null;
  return {
    failed: !status.success,
    timedOut,
    ms: performance.now() - started,
  };
}

let running: Deno.ChildProcess | null = null;

function killGroup(pid: number): void {
  try {
    Deno.kill(-pid, "SIGKILL");
  } catch {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* already gone */ }
  }
}

async function typeChecks(cwd: string, file: string): Promise<boolean> {
  const { success } = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--config", "deno.dev.json", "--quiet", file],
    cwd,
    stdout: "null",
    stderr: "null",
  }).output();
  return success;
}

/** A copy of the repository (without .git) that mutants are written into. */
async function copyRepository(): Promise<string> {
  const copy = await Deno.makeTempDir({ prefix: "dbport-mutate-" });
  for await (const entry of Deno.readDir(ROOT)) {
    if (entry.name === ".git") continue;
    const { success } = await new Deno.Command("cp", {
      args: ["-a", join(ROOT, entry.name), copy],
    }).output();
    if (!success) throw new Error(`could not copy ${entry.name} to ${copy}`);
  }
  return copy;
}

interface Options {
  modules: string[];
  cap: number;
  seed: number;
  list: boolean;
}

function parseArgs(args: string[]): Options {
  const options: Options = { modules: [], cap: 40, seed: 34, list: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--cap") options.cap = Number(args[++i]);
    else if (arg === "--seed") options.seed = Number(args[++i]);
    else if (arg === "--list") options.list = true;
    else if (arg.startsWith("--")) throw new Error(`unknown option ${arg}`);
    else options.modules.push(relative(ROOT, join(Deno.cwd(), arg)));
  }
  if (!Number.isInteger(options.cap) || options.cap < 1) {
    throw new Error("--cap takes a whole number above 0");
  }
  return options;
}

function print(line = ""): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

async function main(): Promise<number> {
  const options = parseArgs(Deno.args);
  const map = JSON.parse(await Deno.readTextFile(MAP_FILE)) as Record<
    string,
    Mapped
  >;
  const equivalents = JSON.parse(
    await Deno.readTextFile(EQUIVALENTS_FILE),
  ) as Equivalent[];
  const modules = options.modules.length > 0
    ? options.modules
    : Object.keys(map);
  for (const module of modules) {
    if (map[module] === undefined) {
      throw new Error(`${module} has no entry in scripts/mutate_map.json`);
    }
  }
  if (options.list) {
    for (const module of modules) {
      const source = await Deno.readTextFile(join(ROOT, module));
      const all = mutants(source, module);
      const chosen = sample(all, options.cap, options.seed);
      print(`${module}: ${chosen.length} of ${all.length} mutants`);
      for (const m of chosen) {
        print(`  ${module}:${m.line}:${m.column}  ${m.operator}: ${m.edit}`);
      }
    }
    return 0;
  }

  const copy = await copyRepository();
  const cleanup = () => {
    if (running !== null) killGroup(running.pid);
    Deno.removeSync(copy, { recursive: true });
  };
  const onSignal = () => {
    cleanup();
    print("\ninterrupted: the worktree was never edited; the copy is removed");
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  const summary: string[] = [];
  try {
    for (const module of modules) {
      summary.push(
        await mutateModule(module, map[module]!, copy, options, equivalents),
      );
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    cleanup();
  }
  print(
    "\n== scores (noticed by tests / mutants that are programs and not equivalent)",
  );
  for (const line of summary) print(line);
  return 0;
}

async function mutateModule(
  module: string,
  tests: Mapped,
  copy: string,
  options: Options,
  equivalents: Equivalent[],
): Promise<string> {
  const path = join(copy, module);
  const original = await Deno.readTextFile(path);
  const chosen = sample(mutants(original, module), options.cap, options.seed);
  print(
    `\n== ${module}: ${chosen.length} mutants; unit: ${
      tests.unit.join(" ") || "-"
    }; e2e: ${tests.e2e.join(" ") || "-"}`,
  );
  // The tests must pass on the module as it is; their time sets the timeout.
  const exists = (file: string) => {
    try {
      return Deno.statSync(join(copy, file)).isFile;
    } catch {
      print(`  (mapped test ${file} does not exist: left out)`);
      return false;
    }
  };
  const unit = tests.unit.filter(exists);
  const e2e = tests.e2e.filter(exists);
  const stages = [unit, e2e].filter((files) => files.length > 0);
  let baseline = 0;
  for (const files of stages) {
    const run = await runTests(copy, files, 15 * 60_000);
    if (run.failed) {
      return `${module}: its mapped tests fail on the unmutated code (${
        files.join(" ")
      }); not scored`;
    }
    baseline += run.ms;
  }
  const timeoutMs = Math.max(30_000, 4 * baseline);
  const outcomes: [Mutant, Outcome][] = [];
  try {
    for (const [index, mutant] of chosen.entries()) {
      await Deno.writeTextFile(
        path,
        original.slice(0, mutant.start) + mutant.text +
          original.slice(mutant.end),
      );
      let outcome: Outcome = { kind: "survived" };
      for (const files of stages) {
        const run = await runTests(copy, files, timeoutMs);
        const by = files === unit ? "unit" : "e2e";
        if (run.timedOut) outcome = { kind: "timeout", by };
        else if (run.failed) outcome = { kind: "killed", by };
        if (outcome.kind !== "survived") break;
      }
      if (outcome.kind === "survived" && !(await typeChecks(copy, module))) {
        outcome = { kind: "type" };
      }
      if (outcome.kind === "survived") {
        const known = equivalents.find((e) =>
          e.file === module && e.line === mutant.line &&
          e.column === mutant.column && e.edit === mutant.edit
        );
        if (known !== undefined) {
          outcome = { kind: "equivalent", why: known.why };
        }
      }
      outcomes.push([mutant, outcome]);
      print(
        `  [${
          index + 1
        }/${chosen.length}] ${module}:${mutant.line}:${mutant.column} ${mutant.edit}: ${
          describe(outcome)
        }`,
      );
    }
  } finally {
    await Deno.writeTextFile(path, original);
  }
  const count = (kind: Outcome["kind"]) =>
    outcomes.filter(([, o]) => o.kind === kind).length;
  const noticed = count("killed") + count("timeout");
  const scored = outcomes.length - count("type") - count("equivalent");
  const survivors = outcomes.filter(([, o]) => o.kind === "survived");
  if (survivors.length > 0) {
    print(`  survivors of ${module}:`);
    for (const [m] of survivors) {
      print(`    ${module}:${m.line}:${m.column}  ${m.operator}: ${m.edit}`);
    }
  }
  const percent = scored === 0 ? 100 : Math.floor((100 * noticed) / scored);
  return `${module}: ${percent}% (${noticed} of ${scored}; ${
    count("timeout")
  } by timeout, ${count("type")} killed by the type checker, ${
    count("equivalent")
  } equivalent, ${survivors.length} survived)`;
}

function describe(outcome: Outcome): string {
  switch (outcome.kind) {
    case "killed":
      return `killed (${outcome.by})`;
    case "timeout":
      return `killed by timeout (${outcome.by})`;
    case "type":
      return "killed by the type checker (not counted)";
    case "equivalent":
      return `equivalent: ${outcome.why}`;
    case "survived":
      return "SURVIVED";
  }
}

if (import.meta.main) Deno.exit(await main());
