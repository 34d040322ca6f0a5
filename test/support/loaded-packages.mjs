// Preloaded with `--import` (NODE_OPTIONS) into a program under test: appends the name of every
// npm package the program resolves an import of to the file LOADED_PACKAGES_FILE, one a line,
// so that a test can tell which dependencies a start loaded (src/main.lazy.test.ts).
import { register } from 'node:module';

register('./loaded-packages-hooks.mjs', import.meta.url, { data: { file: process.env.LOADED_PACKAGES_FILE } });
