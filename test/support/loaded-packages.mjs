// Preloaded with `--import` (NODE_OPTIONS) into a program under test: appends the name of every
// npm package the program resolves an import of to the file LOADED_PACKAGES_FILE, one a line,
// so that a test can tell which dependencies a start loaded (src/main.lazy.test.ts).
import { register } from 'node:module';

register('./loaded-packages-hooks.mjs', import.meta.url, { data: { file: process.env.LOADED_PACKAGES_FILE } });

// Locale-aware formatting maps ICU's data out of the node binary (about 5 MB resident, for good):
// its first use in the program is recorded too, as `icu:<what>` (a default start must have none).
import { appendFileSync } from 'node:fs';

const file = process.env.LOADED_PACKAGES_FILE;
const used = new Set();
const record = (what) => {
  if (!file || used.has(what)) return;
  used.add(what);
  appendFileSync(file, `icu:${what}\n`);
};
const watch = (owner, method, what) => {
  const original = owner[method];
  owner[method] = function (...args) {
    record(what);
    return original.apply(this, args);
  };
};
watch(Number.prototype, 'toLocaleString', 'Number.toLocaleString');
watch(Date.prototype, 'toLocaleString', 'Date.toLocaleString');
watch(Date.prototype, 'toLocaleDateString', 'Date.toLocaleDateString');
watch(Date.prototype, 'toLocaleTimeString', 'Date.toLocaleTimeString');
watch(String.prototype, 'localeCompare', 'String.localeCompare');
watch(String.prototype, 'toLocaleUpperCase', 'String.toLocaleUpperCase');
watch(String.prototype, 'toLocaleLowerCase', 'String.toLocaleLowerCase');
watch(Array.prototype, 'toLocaleString', 'Array.toLocaleString');
for (const name of Object.getOwnPropertyNames(Intl)) {
  if (typeof Intl[name] !== 'function') continue;
  Intl[name] = new Proxy(Intl[name], {
    construct: (target, args) => (record(`Intl.${name}`), Reflect.construct(target, args)),
    apply: (target, self, args) => (record(`Intl.${name}`), Reflect.apply(target, self, args)),
  });
}
