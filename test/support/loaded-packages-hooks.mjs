// The module hooks of loaded-packages.mjs (they run on the loader's own thread).
import { appendFileSync } from 'node:fs';

let file;

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(resolved.url)?.[1];
  if (name && file) appendFileSync(file, `${name}\n`);
  return resolved;
}
