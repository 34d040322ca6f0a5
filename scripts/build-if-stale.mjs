#!/usr/bin/env node
// Builds dist/ from src/ only when a source file is newer than the last build, so `npm start`
// does not spend ~15 s in tsc when nothing changed. Plain JavaScript: it runs before any build.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.build-stamp');
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

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

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (!existsSync(tsc)) {
  if (built >= 0) process.exit(0); // an install without dev dependencies runs the build it has
  console.error('Cannot build: TypeScript is not installed. Run `npm ci` (with dev dependencies) first.');
  process.exit(2);
}
if (!always) console.error('Building the server (src/ changed since the last build)…');
// The stamp takes the time the build started: a file saved while tsc runs is newer, so it is built next time.
const started = new Date();
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
} catch {
  process.exit(1);
}
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
