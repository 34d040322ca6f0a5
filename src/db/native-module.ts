import { createRequire } from 'node:module';
import SqliteDatabase from 'better-sqlite3';
import { StartupError } from '../shared/startup-error.js';

/**
 * better-sqlite3's compiled part was built for another Node.js than the one running: after a
 * change of Node without `npm rebuild`. It is the installation's fault, not the database's, so it
 * names no database setting; the message says what to run and where.
 */
export class NativeModuleMismatch extends StartupError {
  constructor(
    readonly builtFor: string,
    readonly nodeNeeds: string,
    readonly folder: string,
  ) {
    const reason = `better-sqlite3 was built for another Node.js (module version ${builtFor}, this Node needs ${nodeNeeds}): run \`npm rebuild better-sqlite3\` in ${folder}`;
    super('better-sqlite3', reason);
    // The reason already begins with the module's name; "better-sqlite3: better-sqlite3 …" would stutter.
    this.message = reason;
    this.name = 'NativeModuleMismatch';
  }
}

// Node's text for an add-on of another ABI: "The module '<file>'\nwas compiled against a different
// Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 137. …"
const MISMATCH = /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/;
const MODULE_FILE = /The module '([^']+)'/;
const PACKAGE_IN_PATH = /[\\/]node_modules[\\/]better-sqlite3(?:[\\/]|$)/;

/**
 * The mismatch `error` reports when loading better-sqlite3's add-on failed for an ABI of another
 * Node.js, or null for any other error. `packageFile` is a file of the installed better-sqlite3,
 * used when Node's text names none.
 */
export function nativeModuleMismatch(error: unknown, packageFile: () => string | null = installedPackageFile): NativeModuleMismatch | null {
  if (!(error instanceof Error)) return null;
  const versions = MISMATCH.exec(error.message);
  if (!versions) return null;
  const file = MODULE_FILE.exec(error.message)?.[1] ?? packageFile();
  return new NativeModuleMismatch(versions[1]!, versions[2]!, installFolderOf(file));
}

/**
 * The folder whose node_modules holds better-sqlite3: the checkout, or for a global install the
 * package's own folder (…/lib/node_modules/strongroom), where `npm rebuild` finds it.
 */
function installFolderOf(file: string | null): string {
  const match = file === null ? null : PACKAGE_IN_PATH.exec(file);
  return match && file !== null ? file.slice(0, match.index) : 'the folder Strongroom is installed in';
}

function installedPackageFile(): string | null {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3');
  } catch {
    return null;
  }
}

/** Opens a SQLite file as better-sqlite3 does; an add-on of another Node.js throws NativeModuleMismatch. */
export function openSqliteFile(path: string, options?: SqliteDatabase.Options): SqliteDatabase.Database {
  try {
    return new SqliteDatabase(path, options);
  } catch (error) {
    throw nativeModuleMismatch(error) ?? error;
  }
}
