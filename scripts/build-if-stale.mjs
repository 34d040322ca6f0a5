#!/usr/bin/env node
// Builds dist/ only when a file of src/ (or package-lock.json, ...: `inputs`) is newer than the last build. Plain JavaScript:
// it runs before any build. The build is a bundle (esbuild): the server's own modules in one
// file, plus a chunk for each part loaded on demand (operator commands, the admin console, ...).
// Loading one file instead of some 300 takes about a fifth off the start's CPU (docs/benchmarks.md,
// Start). The packages every start loads are bundled too, with blanks and comments taken out:
// V8 keeps the source text of every module it loads, and the bundle leaves out what the server
// never calls (Kysely's other dialects, most of TypeBox); together about 9 MB less resident memory
// at idle and a start's CPU nearly halved (docs/benchmarks.md, "The bundle takes in the npm
// packages"). Local names are shortened too (about 1 MB less source and heap); functions and
// classes keep their names, so stack traces still read, and the source maps beside the files
// give the lines and the original names (`node --enable-source-maps`). Types are checked by
// `npm run typecheck`.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.build-stamp');
// esbuild reads tsconfig.json too (target, class fields, module syntax). The lock file: the bundle
// holds the packages every start loads, so an upgrade of one of them (`npm ci` after a new lock
// file) must build again.
const inputs = ['src', 'tsconfig.json', 'package.json', 'package-lock.json', 'scripts/build-if-stale.mjs'];

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted or renamed file changes its directory
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : -1;
const changed = Math.max(...inputs.map((input) => newestChange(join(root, input))));
const always = process.argv.includes('--always'); // `npm run build`
if (built >= changed && !always) process.exit(0);

const esbuildPackage = join(root, 'node_modules', 'esbuild', 'package.json');
if (!existsSync(esbuildPackage)) {
  if (built >= 0) process.exit(0); // an install without dev dependencies runs the build it has
  console.error('Cannot build: esbuild is not installed. Run `npm ci` (with dev dependencies) first.');
  process.exit(2);
}
if (!always) console.error('Building the server (src/ or the packages changed since the last build)…');
/**
 * The npm packages the server's own code imports that go into the bundle: those every start loads.
 * What they import in turn is bundled with them, except NEVER_BUNDLED. Every other package stays in
 * node_modules and loads from there: the optional ones (test/support/lazy-packages.ts) only when
 * configured, as before, and a package added later until it is listed here and the built server's
 * test (test/e2e/built-server.test.ts) passes.
 */
const BUNDLED = new Set([
  'fastify', '@fastify/formbody', '@fastify/multipart', '@fastify/static', '@fastify/type-provider-typebox',
  'ajv', 'ajv-formats', 'fast-json-stringify', 'typebox', 'kysely', 'jose', 'ws', 'uuid', '@msgpack/msgpack',
]);
/**
 * Left out even when a bundled package imports them: native addons, packages that read files beside
 * their own code (pino starts its transports from its folder), and ws's optional native helpers.
 */
const NEVER_BUNDLED = new Set(['better-sqlite3', 'pino', 'bufferutil', 'utf-8-validate']);

const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
const insideFolder = (folder, file) => {
  const path = relative(folder, file);
  return path !== '' && !path.startsWith('..') && !isAbsolute(path);
};
/**
 * Node's own modules reach the bundle through require(), as a bundled CommonJS package reaches
 * them, never through an `import` of `node:…`: for an import, Node builds the module's ES module
 * facade, which reads every export once, getters included. On Node 22 and later `node:http`'s
 * `WebSocket`, `CloseEvent` and `MessageEvent` are such getters, and reading them loads undici
 * (Node's fetch): about 8 MB resident for a server that never calls it (docs/benchmarks.md, the
 * lean section). A bundled package's require() gets the module object itself; the server's own
 * imports go through BUILTIN_AS_MODULE.
 */
const BUILTIN_BY_REQUIRE = 'builtin-by-require';
/**
 * What the server's own modules import from Node's modules comes from one ES module per Node
 * module, which requires it once: a module importing a CommonJS one would get a copy of it from
 * esbuild instead, a getter and a closure for every export, in every importing module (73 copies,
 * about 1.3 MB of heap; issue #43, docs/benchmarks.md). Each export is read through a pure
 * function, so the bundle keeps, and reads when it loads, only the names the server imports,
 * getters included (a name may be a value on one Node line and a getter on the next). A getter
 * that loads something large is read where it is used instead, off the default import:
 * `crypto.webcrypto`, `util.parseArgs`.
 */
const BUILTIN_AS_MODULE = 'builtin-as-module';
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
function builtinAsModule(path) {
  const names = Object.getOwnPropertyNames(createRequire(import.meta.url)(path)).filter((name) => name !== 'default' && IDENTIFIER.test(name));
  return [
    `const m = require(${JSON.stringify(path)});`,
    'export default m;',
    ...names.map((name) => `export const ${name} = /* @__PURE__ */ (() => m.${name})();`),
  ].join('\n');
}
const packagesLeftOut = {
  name: 'packages-left-out',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, ({ path, importer, kind, namespace }) => {
      if (namespace === BUILTIN_BY_REQUIRE) return { path, external: true };
      if (path.startsWith('node:') && kind === 'import-statement') return { path, namespace: BUILTIN_AS_MODULE };
      if (path.startsWith('node:')) return { path, external: true };
      const name = packageOf(path);
      const bundled = insideFolder(join(root, 'src'), importer) ? BUNDLED.has(name) : !NEVER_BUNDLED.has(name);
      return bundled ? undefined : { path, external: true };
    });
    build.onLoad({ filter: /.*/, namespace: BUILTIN_AS_MODULE }, ({ path }) => ({ contents: builtinAsModule(path), loader: 'js' }));
    build.onLoad({ filter: /.*/, namespace: BUILTIN_BY_REQUIRE }, ({ path }) => ({
      contents: `module.exports = require(${JSON.stringify(path)});`,
      loader: 'js',
    }));
  },
};

// The stamp takes the time the build started: a file saved while the build runs is newer, so it is built next time.
const started = new Date();
const { build } = await import('esbuild');
// Chunks are named by their content: a rebuild leaves no stale file beside the new ones.
rmSync(join(root, 'dist'), { recursive: true, force: true });
let result;
try {
  result = await build({
    entryPoints: [join(root, 'src', 'main.ts')],
    outdir: join(root, 'dist'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [packagesLeftOut],
    // A bundled CommonJS package calls require() for Node's own modules: this gives it one.
    banner: { js: "import { createRequire as createRequireForBundledPackages } from 'node:module'; const require = createRequireForBundledPackages(import.meta.url);" },
    sourcemap: true,
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: true,
    // Classes and functions keep their names (an error's name is its class's, and the logs show it).
    keepNames: true,
    logLevel: 'warning',
    metafile: true,
  });
} catch {
  process.exit(1); // esbuild has printed why
}
// A bundled package that finds files beside its own code would look in dist/ instead, and fail or
// quietly change at run time. Such a package must not be bundled: take it off BUNDLED, or put it in
// NEVER_BUNDLED when another package brings it in. Fail here rather than in an operator's start.
const FINDS_ITS_FOLDER = /\b__dirname\b|\b__filename\b|\bimport\.meta\.(?:url|dirname|filename)\b|\brequire\.resolve\b/;
for (const input of Object.keys(result.metafile.inputs).filter((path) => path.split('/').includes('node_modules'))) {
  const found = FINDS_ITS_FOLDER.exec(readFileSync(join(root, input), 'utf8'));
  if (found) {
    console.error(`Cannot build: ${input} is bundled and uses ${found[0]}, which would point into dist/. Leave its package out of the bundle (scripts/build-if-stale.mjs).`);
    process.exit(1);
  }
}
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
