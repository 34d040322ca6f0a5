import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * The symbolic links under `root` (as paths relative to it, with `/`) that lead outside it, or
 * nowhere. Files are served by their path in the folder, so a link planted in an unpacked
 * archive (`db -> ../strongroom.sqlite`, `etc -> /etc`) would otherwise serve whatever it points
 * at. Links inside the folder are followed as usual.
 */
export function linksLeavingFolder(root: string): string[] {
  const realRoot = realpathSync(root);
  const leaving: string[] = [];
  // `ancestors`: the real folders on the way down, so that a link back up is not walked again.
  const walk = (dir: string, realDir: string, ancestors: ReadonlySet<string>) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        const real = join(realDir, entry.name);
        walk(path, real, new Set([...ancestors, real]));
        continue;
      }
      if (!entry.isSymbolicLink()) continue;
      let target: string;
      try {
        target = realpathSync(path);
      } catch {
        target = ''; // a broken link serves nothing either way
      }
      if (target !== realRoot && !target.startsWith(realRoot + sep)) {
        leaving.push(relative(root, path).split(sep).join('/'));
        continue;
      }
      // Files are also served through a link to a folder inside, so a link leaving from that
      // folder must be refused under this path too (`inner-alias/escape` as `inner/escape`).
      if (!ancestors.has(target) && statSync(target).isDirectory()) walk(path, target, new Set([...ancestors, target]));
    }
  };
  walk(root, realRoot, new Set([realRoot]));
  return leaving;
}
