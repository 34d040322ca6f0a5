#!/usr/bin/env node
// `npm pack` ships the lock file as npm-shrinkwrap.json, the form npm reads inside an installed
// package: `npm install -g strongroom-<v>.tgz` then installs exactly the versions this release was
// tested with (and can do so offline from a filled cache), instead of resolving the ranges in
// package.json anew. `prepack` writes the copy, `postpack` removes it, so the checkout keeps only
// package-lock.json (a shrinkwrap file there would take its place for `npm ci`).
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const shrinkwrap = join(root, 'npm-shrinkwrap.json');
if (process.argv[2] === 'copy') copyFileSync(join(root, 'package-lock.json'), shrinkwrap);
else rmSync(shrinkwrap, { force: true });
