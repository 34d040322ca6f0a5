import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/**
 * The symbolic links under `root` (as paths relative to it, with `/`) that lead outside it, or
 * nowhere. Files are served by their path in the folder, so a link planted in an unpacked
 * archive (`db -> ../strongroom.sqlite`, `etc -> /etc`) would otherwise serve whatever it points
 * at. Links inside the folder are followed as usual.
 */
export function linksLeavingFolder(root: string): string[] {
  const realRoot = realpathSync(root);
  const leaving: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      if (!lstatSync(path).isSymbolicLink()) continue;
      let target: string;
      try {
        target = realpathSync(path);
      } catch {
        target = ''; // a broken link serves nothing either way
      }
      if (target !== realRoot && !target.startsWith(realRoot + sep)) leaving.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(root);
  return leaving;
}

/**
 * Whether a path served from the folder really lies inside it, links resolved. Checked on every
 * request, since a link inside the folder may lead to another that leaves it, and a link can be
 * re-pointed while the server runs.
 */
export function staysInside(realRoot: string, root: string, path: string): boolean {
  let target: string;
  try {
    target = realpathSync(resolve(root, `.${path.startsWith('/') ? '' : '/'}${path}`));
  } catch {
    return false;
  }
  return target.startsWith(realRoot + sep);
}
