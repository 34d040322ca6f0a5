import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { causeOf } from '../shared/startup-error.js';

/** Who the process runs as, in words: `user strongroom (uid 1000)`, or `uid 1000` without a passwd entry. */
export function processUser(): string {
  const uid = process.getuid?.();
  if (uid === undefined) return 'this user';
  try {
    return `user ${userInfo().username} (uid ${uid})`;
  } catch {
    return `uid ${uid}`;
  }
}

const PERMISSION_DENIED = 'permission denied';

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Why the process may not use `path` so (EACCES, EROFS, ...), or undefined when it may. */
function refusal(path: string, mode: number): string | undefined {
  try {
    accessSync(path, mode);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EACCES';
  }
}

function modeText(stats: Stats): string {
  return `owner uid ${stats.uid}, mode ${(stats.mode & 0o777).toString(8).padStart(3, '0')}`;
}

/**
 * What stands in the way of writing (or reading) `path`, found on the file system: a file where a
 * folder should be, a read-only file system, a folder or file this user may not write. Undefined
 * when nothing does.
 */
export function pathProblem(path: string, need: 'write' | 'read', code?: string): string | undefined {
  const target = resolve(path);
  let existing = target;
  let stats = statOf(existing);
  while (stats === undefined && dirname(existing) !== existing) {
    existing = dirname(existing);
    stats = statOf(existing);
  }
  if (stats === undefined) return undefined;
  if (existing !== target && !stats.isDirectory()) return `${existing} is a file, not a folder`;
  if (code === 'EROFS') return `the file system holding ${existing} is read-only`;
  const folder = stats.isDirectory() ? existing : dirname(existing);
  const folderStats = folder === existing ? stats : statOf(folder);
  if (need === 'read') {
    return refusal(existing, constants.R_OK) ? `${PERMISSION_DENIED} for ${processUser()} on ${existing} (not readable; ${modeText(stats)})` : undefined;
  }
  const folderRefusal = refusal(folder, constants.W_OK | constants.X_OK);
  // A read-only file system refuses even root, which permissions never do.
  if (folderRefusal === 'EROFS') return `the file system holding ${folder} is read-only`;
  if (folderRefusal) return `${PERMISSION_DENIED} for ${processUser()} on ${folder} (folder not writable; ${folderStats ? modeText(folderStats) : 'owner unknown'})`;
  if (existing === target && stats.isFile() && refusal(target, constants.W_OK)) {
    return `${PERMISSION_DENIED} for ${processUser()} on ${target} (file not writable; ${modeText(stats)})`;
  }
  return undefined;
}

/**
 * Why `path` could not be created, written or read, found on the file system rather than taken
 * from the error alone (Node's recursive mkdir says ENOENT for a folder that exists but may not be
 * written, and SQLite says only "unable to open database file"); undefined when the file system
 * shows nothing more than the error says.
 */
export function diagnosedFileProblem(path: string, need: 'write' | 'read', error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const found = pathProblem(path, need, code);
  if (found) return found;
  if (code === 'EACCES' || code === 'EPERM') return `${PERMISSION_DENIED} for ${processUser()} on ${resolve(path)}`;
  return undefined;
}

/** `diagnosedFileProblem`, or the error's own words when the file system adds nothing. */
export function fileProblem(path: string, need: 'write' | 'read', error: unknown): string {
  return diagnosedFileProblem(path, need, error) ?? causeOf(error);
}

/**
 * The start of what to do about a problem these functions found, before the setting it names:
 * a permission can be given to this user, anything else only avoided by another path.
 */
export function remedyOf(problem: string, need: 'write' | 'read'): string {
  return problem.startsWith(PERMISSION_DENIED) ? `make it ${need === 'write' ? 'writable' : 'readable'} for ${processUser()}, or set` : 'set';
}
