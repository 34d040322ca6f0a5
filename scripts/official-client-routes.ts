/**
 * Regenerates test/support/official-client-routes.json: every API route the official web vault
 * and the shared client libraries call, read from the TypeScript source of bitwarden/clients.
 * test/official-routes.test.ts checks each one against Strongroom's route table.
 *
 * The source can be any of:
 *   --git <clients .git dir> [--rev <ref>]   a bare or fetched clone (read with git ls-tree / git show)
 *   --tree <clients work tree>               a checked-out clone
 *     [--commits <map.json>]                 or files read one by one from an index: a JSON map
 *                                            path -> the commit each file was read at
 *   --sourcemap <bw.js.map> --ref <name>     the map shipped in the npm package @bitwarden/cli, which
 *                                            carries the shared libraries' source (not apps/web's)
 * Add --merge to keep the routes of the current file whose source the new read does not cover
 * (for example apps/web routes read by hand when only a source map is at hand).
 *
 *   npx tsx scripts/official-client-routes.ts --git /path/to/clients.git --rev origin/main
 *
 * Only a call's shape is read (the method and the path expression passed to `send(...)` or to a
 * request built on `getApiUrl()`/`getIdentityUrl()`/...); no client code is copied.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const OUTPUT = new URL('../test/support/official-client-routes.json', import.meta.url);
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']);
/** The folders whose code runs in the web vault: the shared libraries, the web app, the licensed web code. */
const IN_SCOPE = /^(libs\/|apps\/web\/src\/|bitwarden_license\/bit-common\/src\/|bitwarden_license\/bit-web\/src\/)/;
const SKIP = /\.(spec|test|stories)\.ts$|\/(test|spec|mocks?)\//;
const MAX_ALTERNATIVES = 16;

export interface OfficialRoute {
  /** `METHOD /service/path/{}/…`: parameters unnamed, no query string. */
  route: string;
  /** The first file (in path order) that calls it. */
  source: string;
  /** The clients commit (or release ref) that file was read at. */
  commit: string;
}

interface RouteFile {
  about: string;
  read: { from: string; commit: string; date: string }[];
  routes: OfficialRoute[];
}

type Sources = Map<string, string>;

function argument(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

function fromGit(gitDir: string, rev: string): { sources: Sources; commit: string } {
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const commit = git('rev-parse', rev).trim();
  const sources: Sources = new Map();
  for (const path of git('ls-tree', '-r', '--name-only', commit).split('\n')) {
    if (path.endsWith('.ts') && IN_SCOPE.test(path) && !SKIP.test(path)) sources.set(path, git('show', `${commit}:${path}`));
  }
  return { sources, commit };
}

function fromTree(root: string): { sources: Sources; commit: string; commits?: Record<string, string> } {
  const sources: Sources = new Map();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const path = relative(root, full);
        if (path.endsWith('.ts') && IN_SCOPE.test(path) && !SKIP.test(path)) sources.set(path, readFileSync(full, 'utf8'));
      }
    }
  };
  walk(root);
  const commit = existsSync(join(root, '.git')) ? execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim() : 'unknown';
  // Files fetched one at a time from an index come from different commits: record each one's.
  const map = argument('--commits');
  const commits = map ? (JSON.parse(readFileSync(map, 'utf8')) as Record<string, string>) : undefined;
  return { sources, commit, commits };
}

function fromSourceMap(file: string, ref: string): { sources: Sources; commit: string } {
  const map = JSON.parse(readFileSync(file, 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
  const sources: Sources = new Map();
  map.sources.forEach((source, i) => {
    // webpack://@bitwarden/cli/../../libs/common/src/x.ts -> libs/common/src/x.ts
    const path = source.replace(/^webpack:\/\/[^/]+\/[^/]+\/(\.\.\/\.\.\/)?/, '');
    const text = map.sourcesContent?.[i];
    if (text && path.endsWith('.ts') && IN_SCOPE.test(path) && !SKIP.test(path)) sources.set(path, text);
  });
  return { sources, commit: ref };
}

/** Which service a base-URL expression names. */
function serviceOf(text: string): string | undefined {
  if (/IdentityUrl/.test(text)) return '/identity';
  if (/EventsUrl/.test(text)) return '/events';
  if (/IconsUrl/.test(text)) return '/icons';
  if (/NotificationsUrl/.test(text)) return '/notifications';
  if (/ApiUrl/.test(text)) return '/api';
  return undefined;
}

/** The enclosing function or method body, where a path variable is declared. */
function scopeOf(node: ts.Node): ts.Node {
  let n: ts.Node | undefined = node.parent;
  while (n && !ts.isFunctionLike(n) && !ts.isSourceFile(n)) n = n.parent;
  return n ?? node.getSourceFile();
}

/**
 * The literal shapes a path expression can take: string pieces joined, `{}` for anything computed.
 * A local variable is followed to its initializer and later `=`/`+=` assignments in the same function.
 */
function shapes(expr: ts.Expression, seen: Set<string> = new Set()): string[] {
  if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) return [expr.text];
  if (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isNonNullExpression(expr)) return shapes(expr.expression, seen);
  if (ts.isTemplateExpression(expr)) {
    let out = [expr.head.text];
    for (const span of expr.templateSpans) {
      const inner = shapes(span.expression, seen).map((s) => (s.startsWith('/') || s.startsWith('?') ? s : '{}'));
      out = cross(out, inner.map((s) => s + span.literal.text));
    }
    return out;
  }
  if (ts.isBinaryExpression(expr) && expr.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return cross(shapes(expr.left, seen), shapes(expr.right, seen));
  }
  if (ts.isConditionalExpression(expr)) return [...shapes(expr.whenTrue, seen), ...shapes(expr.whenFalse, seen)].slice(0, MAX_ALTERNATIVES);
  if (ts.isIdentifier(expr) && !seen.has(expr.text)) return variableShapes(expr, new Set([...seen, expr.text]));
  // A class field holding the base path (`this.endpoint`) or a method returning it (`this.getEndpoint(x)`).
  const member = thisMember(ts.isCallExpression(expr) ? expr.expression : expr);
  if (member && !seen.has(`this.${member.name}`)) {
    const shaped = memberShapes(member, new Set([...seen, `this.${member.name}`]));
    if (shaped) return shaped;
  }
  // A helper that adds a query string to a path it is given: addEventParameters("/events", start, end).
  if (ts.isCallExpression(expr) && expr.arguments[0]) {
    const inner = shapes(expr.arguments[0], seen);
    if (inner.some((s) => s.startsWith('/'))) return inner;
  }
  return ['{}'];
}

function thisMember(expr: ts.Expression): { name: string; node: ts.Node } | undefined {
  return ts.isPropertyAccessExpression(expr) && expr.expression.kind === ts.SyntaxKind.ThisKeyword ? { name: expr.name.text, node: expr } : undefined;
}

/** The shapes of a class member: a field's initializer, or every `return` of a method or arrow-function field. */
function memberShapes(member: { name: string; node: ts.Node }, seen: Set<string>): string[] | undefined {
  let cls: ts.Node | undefined = member.node.parent;
  while (cls && !ts.isClassLike(cls)) cls = cls.parent;
  if (!cls || !ts.isClassLike(cls)) return undefined;
  for (const m of cls.members) {
    if (!m.name || m.name.getText() !== member.name) continue;
    const body = ts.isPropertyDeclaration(m) ? m.initializer : ts.isMethodDeclaration(m) ? m : undefined;
    if (!body) return undefined;
    if (!ts.isArrowFunction(body) && !ts.isFunctionExpression(body) && !ts.isMethodDeclaration(body)) return shapes(body, seen);
    if (body.body && !ts.isBlock(body.body)) return shapes(body.body, seen);
    const out: string[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isReturnStatement(node) && node.expression) out.push(...shapes(node.expression, seen));
      else if (!ts.isFunctionLike(node)) ts.forEachChild(node, visit);
    };
    if (body.body) ts.forEachChild(body.body, visit);
    return out.length ? out.slice(0, MAX_ALTERNATIVES) : undefined;
  }
  return undefined;
}

function variableShapes(id: ts.Identifier, seen: Set<string>): string[] {
  let values: string[] | undefined;
  const appended: string[][] = [];
  const visit = (node: ts.Node): void => {
    if (node.pos >= id.pos) return;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === id.text && node.initializer) {
      values = shapes(node.initializer, seen);
    } else if (ts.isBinaryExpression(node) && ts.isIdentifier(node.left) && node.left.text === id.text) {
      if (node.operatorToken.kind === ts.SyntaxKind.EqualsToken && values) values = [...values, ...shapes(node.right, seen)];
      if (node.operatorToken.kind === ts.SyntaxKind.PlusEqualsToken) appended.push(shapes(node.right, seen));
    }
    ts.forEachChild(node, visit);
  };
  visit(scopeOf(id));
  if (!values) return ['{}'];
  // A conditional `path += "/x"` gives the path with and without the piece.
  for (const piece of appended) values = [...values, ...cross(values, piece)].slice(0, MAX_ALTERNATIVES);
  return values;
}

function cross(left: string[], right: string[]): string[] {
  return left.flatMap((l) => right.map((r) => l + r)).slice(0, MAX_ALTERNATIVES);
}

/** `/organizations/{}/users?x={}` -> `/organizations/{}/users`; undefined when nothing literal is left. */
function normalise(shape: string): string | undefined {
  const path = shape.split('?')[0]!.replace(/\/{2,}/g, '/').replace(/\/$/, '');
  if (!path.startsWith('/') || !/[a-z]/i.test(path.replace(/\{\}/g, ''))) return undefined;
  // A computed piece fills a whole segment or the tail of one (`/{}`, `/prefix{}`): one parameter.
  return path
    .split('/')
    .map((s) => (s.includes('{}') ? '{}' : s))
    .join('/');
}

function methodOf(options: ts.Expression | undefined): string {
  if (options && ts.isObjectLiteralExpression(options)) {
    for (const p of options.properties) {
      if (ts.isPropertyAssignment(p) && p.name.getText() === 'method' && ts.isStringLiteral(p.initializer)) return p.initializer.text.toUpperCase();
    }
  }
  return 'GET';
}

/** The routes one file calls: `send("METHOD", path, …, baseUrl?)` and requests built on a service's base URL. */
export function routesOf(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found = new Set<string>();
  const add = (method: string, service: string, shapesOf: string[]) => {
    for (const shape of shapesOf) {
      const p = normalise(shape);
      if (p) found.add(`${method} ${service}${p}`);
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
      const [first, second] = node.arguments;
      if (name === 'send' && first && second && ts.isStringLiteral(first) && METHODS.has(first.text.toUpperCase())) {
        const base = node.arguments[5];
        add(first.text.toUpperCase(), (base && serviceOf(base.getText())) ?? '/api', shapes(second));
      } else if (first && ts.isBinaryExpression(first) && first.operatorToken.kind === ts.SyntaxKind.PlusToken) {
        // createRequest(env.getIdentityUrl() + "/connect/token", { method: "POST" }), new Request(...), fetch(...)
        let left: ts.Expression = first;
        while (ts.isBinaryExpression(left)) left = left.left;
        const service = ts.isCallExpression(left) ? serviceOf(left.expression.getText()) : undefined;
        if (service) add(methodOf(node.arguments[1]), service, shapes(first).map((s) => s.replace(/^\{\}/, '')));
      }
    }
    if (ts.isNewExpression(node) && node.arguments?.[0] && ts.isTemplateExpression(node.arguments[0])) {
      // new Request(`${apiUrl}/ciphers/${id}`, { method: "POST" }) where apiUrl = env.getApiUrl()
      const template = node.arguments[0];
      const head = template.templateSpans[0];
      if (template.head.text === '' && head && ts.isIdentifier(head.expression)) {
        const service = serviceOf(variableInitializerText(head.expression));
        // The base URL is computed, so the template's shapes start with `{}`: drop it.
        if (service) add(methodOf(node.arguments[1]), service, shapes(template).map((s) => s.replace(/^\{\}/, '')));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...found];
}

function variableInitializerText(id: ts.Identifier): string {
  let text = '';
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === id.text && node.initializer && node.pos < id.pos) text = node.initializer.getText();
    ts.forEachChild(node, visit);
  };
  visit(scopeOf(id));
  return text;
}

function main(): void {
  const git = argument('--git');
  const tree = argument('--tree');
  const map = argument('--sourcemap');
  const read: { sources: Sources; commit: string; commits?: Record<string, string> } | undefined = git ? fromGit(git, argument('--rev') ?? 'HEAD') : tree ? fromTree(tree) : map ? fromSourceMap(map, argument('--ref') ?? 'unknown') : undefined;
  if (!read) {
    console.error('usage: tsx scripts/official-client-routes.ts (--git <dir> [--rev <ref>] | --tree <dir> [--commits <map.json>] | --sourcemap <bw.js.map> --ref <ref>) [--merge]');
    process.exit(2);
  }
  const routes = new Map<string, OfficialRoute>();
  for (const path of [...read.sources.keys()].sort()) {
    for (const route of routesOf(path, read.sources.get(path)!)) {
      if (!routes.has(route)) routes.set(route, { route, source: path, commit: read.commits?.[path] ?? read.commit });
    }
  }
  const previous: RouteFile | undefined = existsSync(OUTPUT) ? (JSON.parse(readFileSync(OUTPUT, 'utf8')) as RouteFile) : undefined;
  const date = new Date().toISOString().slice(0, 10);
  const reads = read.commits
    ? Object.entries(read.commits)
        .filter(([path]) => [...routes.values()].some((r) => r.source === path))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([path, commit]) => ({ from: `index of bitwarden/clients: ${path}`, commit, date }))
    : [{ from: git ? `git ${git}` : tree ? `tree ${tree}` : `source map ${map!}`, commit: read.commit, date }];
  if (process.argv.includes('--merge') && previous) {
    // Keep routes from files the new read did not include (apps/web when reading a CLI source map).
    for (const old of previous.routes) if (!read.sources.has(old.source) && !routes.has(old.route)) routes.set(old.route, old);
    reads.push(...previous.read.filter((r) => previous.routes.some((o) => o.commit === r.commit && routes.get(o.route) === o)));
  }
  const out: RouteFile = {
    about: 'Routes the official web vault and shared client libraries call (bitwarden/clients). Regenerate with scripts/official-client-routes.ts; checked by test/official-routes.test.ts.',
    read: reads,
    routes: [...routes.values()].sort((a, b) => a.route.localeCompare(b.route)),
  };
  writeFileSync(OUTPUT, JSON.stringify(out, null, 2) + '\n');
  console.log(`wrote ${out.routes.length} routes from ${read.sources.size} files at ${read.commit}`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
