/**
 * Regenerates test/contract/official-client-fields.json: every response field the official clients
 * read from the answers of the routes in ROUTES below, read from the source of a named release.
 * test/contract/client-fields.test.ts checks each one against Strongroom's OpenAPI document and
 * against live answers.
 *
 * Two readers, one per kind of client code:
 *  - TypeScript (bitwarden/clients): the response classes of the web vault, browser, desktop and
 *    CLI, which read a field with `this.getResponseProperty("Name")` (any first-letter case) or,
 *    in the newer key models, with `"name" in response` (exact case, required when its absence
 *    throws). A field handed to `new OtherResponse(...)` names the model it is read with.
 *  - Rust (bitwarden/sdk-internal, the SDK inside the same clients): the serde structs the SDK
 *    deserializes itself (every field; required unless Option or defaulted) and the fields a
 *    conversion from a generated API model reads (`fn try_from(x: CipherDetailsResponseModel)`:
 *    `x.name`; required when wrapped in `require!`), with the JSON type serde expects.
 *
 *   npx tsx scripts/official-client-fields.ts \
 *     --sourcemap node_modules/@bitwarden/cli/build/bw.js.map --ref cli-v2026.9.0 \
 *     [--tree <dir with more clients files> --commits <path -> commit map.json>] \
 *     --sdk <sdk-internal .git dir> [--sdk-rev <ref>]
 *
 * Only names and shapes are read; no client code is copied.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { rustReadsOf, rustShape, rustStructsOf, type RustReads, type RustStruct } from './official-client-fields.rust.js';

const OUTPUT = new URL('../test/contract/official-client-fields.json', import.meta.url);
const IN_SCOPE = /^(libs\/|apps\/web\/src\/|bitwarden_license\/)/;
const SKIP = /\.(spec|test|stories)\.ts$|\/(test|spec|mocks?)\//;

/**
 * The routes whose answers the check covers, and the client models that read each answer. A
 * `ListResponse<X>` is the `{data: [...], continuationToken}` envelope around X; `sdk:` names a
 * model of the SDK. Which model reads which route comes from the clients' API services (the
 * `new XResponse(r)` after each `send(...)`), kept here by hand because they are few and stable.
 */
export const ROUTES: Record<string, string[]> = {
  'POST /identity/connect/token': ['IdentityTokenResponse', 'sdk:IdentityTokenSuccessResponse', 'sdk:LoginSuccessApiResponse'],
  'POST /identity/accounts/prelogin': ['PasswordPreloginResponse', 'sdk:PasswordPreloginResponseModel'],
  'POST /identity/accounts/prelogin/password': ['PasswordPreloginResponse', 'sdk:PasswordPreloginResponseModel'],
  'GET /api/config': ['ServerConfigResponse'],
  'GET /api/sync': ['SyncResponse', 'sdk:SyncResponseModel'],
  'GET /api/accounts/profile': ['ProfileResponse'],
  'PUT /api/accounts/profile': ['ProfileResponse'],
  'GET /api/ciphers/{id}': ['CipherResponse', 'sdk:CipherResponseModel'],
  'GET /api/ciphers/{id}/details': ['CipherResponse', 'sdk:CipherDetailsResponseModel'],
  'POST /api/ciphers': ['CipherResponse', 'sdk:CipherResponseModel'],
  'PUT /api/ciphers/{id}': ['CipherResponse', 'sdk:CipherResponseModel'],
  'GET /api/ciphers': ['ListResponse<CipherResponse>'],
  'GET /api/ciphers/organization-details': ['ListResponse<CipherResponse>'],
  'GET /api/folders': ['ListResponse<FolderResponse>'],
  'GET /api/folders/{id}': ['FolderResponse', 'sdk:FolderResponseModel'],
  'POST /api/folders': ['FolderResponse', 'sdk:FolderResponseModel'],
  'GET /api/collections': ['ListResponse<CollectionDetailsResponse>'],
  'GET /api/organizations/{orgId}/collections': ['ListResponse<CollectionResponse>'],
  'GET /api/organizations/{orgId}/collections/details': ['ListResponse<CollectionAccessDetailsResponse>'],
  'GET /api/organizations/{orgId}/collections/{id}/details': ['CollectionAccessDetailsResponse'],
  'GET /api/sends': ['ListResponse<SendResponse>'],
  'GET /api/sends/{id}': ['SendResponse', 'sdk:SendResponseModel'],
  'POST /api/sends': ['SendResponse', 'sdk:SendResponseModel'],
  'GET /api/organizations/{orgId}/users': ['ListResponse<OrganizationUserUserDetailsResponse>'],
  'GET /api/organizations/{orgId}/users/mini-details': ['ListResponse<OrganizationUserUserMiniResponse>'],
  'GET /api/organizations/{orgId}/users/{id}': ['OrganizationUserDetailsResponse'],
  'GET /api/organizations/{orgId}/users/{id}/reset-password-details': ['OrganizationUserResetPasswordDetailsResponse'],
  'GET /api/organizations/{orgId}/policies': ['ListResponse<PolicyResponse>'],
  'GET /api/organizations/{orgId}/policies/{type}': ['PolicyResponse'],
  'GET /api/devices': ['ListResponse<DeviceResponse>'],
  'GET /api/devices/identifier/{identifier}': ['DeviceResponse'],
  'GET /api/emergency-access/trusted': ['ListResponse<EmergencyAccessGranteeDetailsResponse>'],
  'GET /api/emergency-access/granted': ['ListResponse<EmergencyAccessGrantorDetailsResponse>'],
  'GET /api/auth-requests': ['ListResponse<AuthRequestResponse>'],
  'GET /api/auth-requests/{id}': ['AuthRequestResponse'],
  'GET /api/auth-requests/{id}/response': ['AuthRequestResponse'],
  'GET /api/secrets/{id}': ['sdk:SecretResponseModel'],
  'GET /api/organizations/{organizationId}/secrets': ['sdk:SecretWithProjectsListResponseModel'],
  'GET /api/projects/{id}': ['sdk:ProjectResponseModel'],
  'GET /api/organizations/{organizationId}/projects': ['sdk:ProjectResponseModelListResponseModel'],
};

/** A field as the list writes it: `Name`, then `: Model` or `: Model[]` for a nested model, `: string` etc. for an SDK field's JSON type, then ` (exact)` and/or ` (required)`. */
export type FieldLine = string;

export interface ModelEntry {
  source: string;
  /** Which names the client accepts: `any-case` (getResponseProperty: Name, name, NAME, name) or `exact` (serde/`in`: the names listed, renames and aliases). */
  fields: FieldLine[];
}

interface Field {
  name: string;
  /** Other exact names accepted (serde aliases). */
  aliases?: string[];
  model?: string;
  array?: boolean;
  type?: string;
  exact?: boolean;
  required?: boolean;
}

type Sources = Map<string, string>;

function argument(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

function line(f: Field): FieldLine {
  const names = [f.name, ...(f.aliases ?? [])].join('|');
  const shape = f.model ? `: ${f.model}${f.array ? '[]' : ''}` : f.type ? `: ${f.type}` : '';
  return `${names}${shape}${f.exact ? ' (exact)' : ''}${f.required ? ' (required)' : ''}`;
}

// ---------------------------------------------------------------------------------------------
// TypeScript: bitwarden/clients response classes

interface TsClass {
  source: string;
  base?: string;
  fields: Map<string, Field>;
}

function unwrap(node: ts.Node): ts.Node {
  let n = node;
  for (;;) {
    const p = n.parent;
    if (!p) return n;
    if (ts.isParenthesizedExpression(p) || ts.isAsExpression(p) || ts.isNonNullExpression(p) || ts.isTypeAssertionExpression(p)) n = p;
    else if (ts.isBinaryExpression(p) && p.left === n && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(p.operatorToken.kind)) n = p;
    else return n;
  }
}

const textOf = (e: ts.Expression) => e.getText().replace(/\?\./g, '.');

/** The classes of one file that read response fields. */
export function tsModelsOf(path: string, text: string): Map<string, TsClass> {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out = new Map<string, TsClass>();
  for (const cls of file.statements.filter(ts.isClassDeclaration)) {
    if (!cls.name) continue;
    const base = cls.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression.getText();
    const ctor = cls.members.find(ts.isConstructorDeclaration);
    const param = ctor?.parameters[0]?.name.getText();
    const fields = new Map<string, Field>();
    const bindings = new Map<string, string>(); // variable or this.x -> field name
    const news: ts.NewExpression[] = [];
    const add = (f: Field) => {
      const old = fields.get(f.name);
      fields.set(f.name, { ...old, ...f, required: (old?.required ?? false) || (f.required ?? false) || undefined });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node)) news.push(node);
      if (ts.isCallExpression(node) && textOf(node.expression) === 'this.getResponseProperty' && node.arguments.length === 1) {
        const arg = node.arguments[0]!;
        if (ts.isStringLiteral(arg)) {
          add({ name: arg.text });
          const top = unwrap(node);
          const p = top.parent;
          if (p && ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) bindings.set(p.name.text, arg.text);
          else if (p && ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsToken && p.right === top) bindings.set(textOf(p.left), arg.text);
          else if (p && ts.isNewExpression(p)) bindings.set(`@new:${p.pos}`, arg.text);
        }
      }
      // `"name" in response` and `response.name` in the key models that take `unknown`.
      if (param && ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword && ts.isStringLiteral(node.left) && node.right.getText() === param) {
        const negated = ts.isParenthesizedExpression(node.parent) && ts.isPrefixUnaryExpression(node.parent.parent) && node.parent.parent.operator === ts.SyntaxKind.ExclamationToken;
        let stmt: ts.Node | undefined = node;
        while (stmt && !ts.isIfStatement(stmt)) stmt = stmt.parent;
        const throws = stmt !== undefined && ts.isIfStatement(stmt) && /\bthrow\b/.test(stmt.thenStatement.getText());
        add({ name: node.left.text, exact: true, ...(negated && throws ? { required: true } : {}) });
      }
      if (param && ts.isPropertyAccessExpression(node) && node.expression.getText() === param && !ts.isCallExpression(node.parent)) {
        add({ name: node.name.text, exact: true });
        bindings.set(`${param}.${node.name.text}`, node.name.text);
      }
      ts.forEachChild(node, visit);
    };
    for (const m of cls.members) visit(m);
    // Which model a field's value is read with: `new X(value)` or `value.map((v) => new X(v))`.
    const nested = new Map<string, { model: string; array: boolean }>();
    for (const n of news) {
      const arg = n.arguments?.[0];
      const model = n.expression.getText();
      if (!arg) continue;
      const direct = bindings.get(`@new:${n.pos}`) ?? bindings.get(textOf(arg));
      if (direct) {
        nested.set(direct, { model, array: false });
        continue;
      }
      // new X(v) inside `binding.map((v) => ...)`
      let fn: ts.Node | undefined = n.parent;
      while (fn && !ts.isArrowFunction(fn) && !ts.isFunctionExpression(fn)) fn = fn.parent;
      if (!fn || !(ts.isArrowFunction(fn) || ts.isFunctionExpression(fn))) continue;
      const v = fn.parameters[0]?.name.getText();
      const call = fn.parent;
      if (v !== arg.getText() || !ts.isCallExpression(call) || !ts.isPropertyAccessExpression(call.expression)) continue;
      if (!['map', 'forEach', 'flatMap'].includes(call.expression.name.text)) continue;
      const over = bindings.get(textOf(call.expression.expression));
      if (over) nested.set(over, { model, array: true });
    }
    for (const [name, n] of nested) {
      const f = fields.get(name);
      if (f) fields.set(name, { ...f, model: n.model, array: n.array || undefined });
    }
    if (fields.size > 0 || (base && base !== 'BaseResponse')) out.set(cls.name.text, { source: path, ...(base && base !== 'BaseResponse' ? { base } : {}), fields });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading the sources

function fromSourceMap(file: string): Sources {
  const map = JSON.parse(readFileSync(file, 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
  const sources: Sources = new Map();
  map.sources.forEach((source, i) => {
    const path = source.replace(/^webpack:\/\/[^/]+\/[^/]+\/(\.\.\/\.\.\/)?/, '');
    const text = map.sourcesContent?.[i];
    if (text && path.endsWith('.ts') && IN_SCOPE.test(path) && !SKIP.test(path)) sources.set(path, text);
  });
  return sources;
}

function fromTree(root: string): Sources {
  const sources: Sources = new Map();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const path = relative(root, full);
        if (path.endsWith('.ts') && IN_SCOPE.test(path) && !SKIP.test(path)) sources.set(path, readFileSync(full, 'utf8'));
      }
    }
  };
  walk(root);
  return sources;
}

function fromSdkGit(gitDir: string, rev: string): { sources: Sources; commit: string; date: string } {
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const commit = git('rev-parse', rev).trim();
  const date = git('show', '-s', '--format=%cs', commit).trim();
  const sources: Sources = new Map();
  for (const path of git('ls-tree', '-r', '--name-only', commit).split('\n')) {
    if (path.endsWith('.rs') && /^(crates|bitwarden_license)\//.test(path) && !/\/(tests?|benches|examples)\//.test(path)) sources.set(path, git('show', `${commit}:${path}`));
  }
  return { sources, commit, date };
}

function tsModels(sources: Sources): Map<string, ModelEntry> {
  const classes = new Map<string, TsClass>();
  for (const path of [...sources.keys()].sort()) for (const [name, cls] of tsModelsOf(path, sources.get(path)!)) if (!classes.has(name)) classes.set(name, cls);
  const flatten = (name: string, seen = new Set<string>()): Map<string, Field> => {
    const cls = classes.get(name);
    if (!cls || seen.has(name)) return new Map();
    const inherited = cls.base ? flatten(cls.base, new Set([...seen, name])) : new Map<string, Field>();
    return new Map([...inherited, ...cls.fields]);
  };
  const out = new Map<string, ModelEntry>();
  for (const [name, cls] of classes) {
    const fields = [...flatten(name).values()].map((f) => (f.model && !classes.has(f.model) ? { ...f, model: undefined, array: undefined } : f));
    out.set(name, { source: cls.source, fields: fields.map(line) });
  }
  return out;
}

function sdkModels(sources: Sources): Map<string, ModelEntry> {
  const structs = new Map<string, RustStruct>();
  const enums = new Map<string, string>();
  for (const [path, text] of sources) {
    for (const [name, s] of rustStructsOf(path, text)) if (s.deserialize && (!structs.has(name) || s.generated)) structs.set(name, s);
    if (/bitwarden-api-(api|identity)\/src\/models\//.test(path)) {
      // Generated enums are sent as numbers (with an `__Unknown(i64)` arm) or as strings.
      for (const e of text.matchAll(/pub enum (\w+)\s*\{/g)) enums.set(e[1]!, /__Unknown\(i64\)|Serialize_repr|repr\(i/.test(text) ? 'integer' : 'string');
    }
  }
  const generated = new Set([...structs].filter(([, s]) => s.generated).map(([n]) => n));
  const reads = new Map<string, RustReads>();
  for (const path of [...sources.keys()].sort()) {
    if (/bitwarden-api-/.test(path)) continue;
    for (const [model, r] of rustReadsOf(path, sources.get(path)!, generated)) {
      const old = reads.get(model);
      if (!old) reads.set(model, r);
      else for (const [f, req] of r.fields) old.fields.set(f, (old.fields.get(f) ?? false) || req);
    }
  }
  const out = new Map<string, ModelEntry>();
  const emit = (name: string): void => {
    const key = `sdk:${name}`;
    const s = structs.get(name);
    if (out.has(key) || !s) return;
    // A hand-written struct is read whole by serde; a generated one only where a conversion reads it.
    const read = s.generated ? reads.get(name) : { source: s.source, fields: new Map([...s.fields.keys()].map((f) => [f, false])) };
    if (!read) return;
    out.set(key, { source: read.source, fields: [] });
    const fields: Field[] = [];
    for (const [rustName, required] of read.fields) {
      const f = s.fields.get(rustName);
      if (!f) continue;
      const shape = rustShape(f.rust, enums, structs);
      if (shape.model) emit(shape.model.slice(4));
      const known = shape.model && out.has(shape.model);
      fields.push({ name: f.json, ...(f.aliases.length ? { aliases: f.aliases } : {}), ...(known ? { model: shape.model, array: shape.array } : { type: shape.type }), exact: true, ...(required || f.required ? { required: true } : {}) });
    }
    out.get(key)!.fields = fields.map(line);
  };
  for (const models of Object.values(ROUTES)) for (const m of models) if (m.startsWith('sdk:')) emit(m.slice(4));
  return out;
}

/** The models reachable from ROUTES, so the list holds what is checked and nothing else. */
function reachable(all: Map<string, ModelEntry>): Record<string, ModelEntry> {
  const out: Record<string, ModelEntry> = {};
  const visit = (name: string): void => {
    const list = /^ListResponse<(.+)>$/.exec(name);
    if (list) {
      out[name] = { source: all.get('ListResponse')?.source ?? 'libs/common/src/models/response/list.response.ts', fields: [`Data: ${list[1]!}[]`, 'ContinuationToken'] };
      return visit(list[1]!);
    }
    const m = all.get(name);
    if (!m) throw new Error(`no model ${name} in the sources read: fix ROUTES`);
    if (out[name]) return;
    out[name] = m;
    for (const f of m.fields) {
      const nested = /: ((?:sdk:)?[A-Z]\w*)(\[\])?(?: |$)/.exec(f);
      if (nested && all.has(nested[1]!)) visit(nested[1]!);
    }
  };
  for (const models of Object.values(ROUTES)) for (const m of models) visit(m);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function main(): void {
  const map = argument('--sourcemap');
  const ref = argument('--ref');
  const sdk = argument('--sdk');
  if (!map || !ref || !sdk) {
    console.error('usage: tsx scripts/official-client-fields.ts --sourcemap <bw.js.map> --ref <release> [--tree <dir> --commits <map.json>] --sdk <sdk-internal .git> [--sdk-rev <ref>]');
    process.exit(2);
  }
  const date = new Date().toISOString().slice(0, 10);
  const sources = fromSourceMap(map);
  const read: { from: string; commit: string; date: string }[] = [{ from: `source map of npm @bitwarden/cli (${map.replace(/^.*node_modules\//, '')})`, commit: ref, date }];
  const tree = argument('--tree');
  if (tree) {
    // Files the CLI does not bundle (the web vault's own models), each read at its own commit.
    const commits = JSON.parse(readFileSync(argument('--commits') ?? join(tree, 'commits.json'), 'utf8')) as Record<string, string>;
    for (const [path, text] of fromTree(tree)) {
      sources.set(path, text);
      read.push({ from: `index of bitwarden/clients: ${path}`, commit: commits[path] ?? 'unknown', date });
    }
  }
  const rust = fromSdkGit(sdk, argument('--sdk-rev') ?? 'HEAD');
  read.push({ from: 'bitwarden/sdk-internal (crates/, bitwarden_license/)', commit: rust.commit, date: rust.date });
  const all = new Map([...tsModels(sources), ...sdkModels(rust.sources)]);
  const out = {
    about: 'Response fields the official clients read (bitwarden/clients response classes and the sdk-internal models), per route. Regenerate with scripts/official-client-fields.ts; checked by test/contract/client-fields.test.ts.',
    read,
    routes: ROUTES,
    models: reachable(all),
  };
  writeFileSync(OUTPUT, JSON.stringify(out, null, 2) + '\n');
  console.log(`wrote ${Object.keys(out.models).length} models for ${Object.keys(ROUTES).length} routes`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
