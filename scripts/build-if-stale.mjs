#!/usr/bin/env node
// Builds dist/ from src/ only when a source file is newer than the last build. Plain JavaScript:
// it runs before any build. The build is a bundle (esbuild): the server's own modules in one
// file, plus a chunk for each part loaded on demand (operator commands, the admin console, ...),
// with the npm packages left to node_modules. Loading one file instead of some 300 takes about a
// fifth off the start's CPU (docs/benchmarks.md, Start). Types are checked by `npm run typecheck`.
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.build-stamp');
// esbuild reads tsconfig.json too (target, class fields, module syntax).
const inputs = ['src', 'tsconfig.json', 'package.json', 'scripts/build-if-stale.mjs'];

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
if (!always) console.error('Building the server (src/ changed since the last build)…');
// The stamp takes the time the build started: a file saved while the build runs is newer, so it is built next time.
const started = new Date();
const { build } = await import('esbuild');
// Chunks are named by their content: a rebuild leaves no stale file beside the new ones.
rmSync(join(root, 'dist'), { recursive: true, force: true });
try {
  await build({
    entryPoints: [join(root, 'src', 'main.ts')],
    outdir: join(root, 'dist'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    // Classes and functions keep their names (an error's name is its class's, and the logs show it).
    keepNames: true,
    logLevel: 'warning',
  });
} catch {
  process.exit(1); // esbuild has printed why
}
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
