import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type SqliteDatabase from 'better-sqlite3';
import { create as createTar, extract as extractTar } from 'tar';
import { filesDirOf, type Config } from '../config/config.js';
import { engineOf, sqlitePathOf } from '../db/database.js';
import { openSqliteFile } from '../db/native-module.js';
import { UsageError } from '../shared/startup-error.js';

/**
 * `strongroom backup <file>` and `strongroom restore <file>` (docs/operations.md).
 *
 * A backup is one gzip-compressed tar archive:
 *   strongroom-backup.json   what it holds (format, engine, when, the last migration applied)
 *   database.sqlite          SQLite only: a consistent copy taken with SQLite's online backup API
 *                            while the server keeps running and writing
 *   data/…                   every file under DATA_DIR except the live database files
 * The database is copied first and the files after it, so every file a copied row names is in the
 * archive (a file written later is an unreferenced extra, never a missing one).
 * On PostgreSQL the database is not in the archive: it is dumped with pg_dump beside it.
 */

export const BACKUP_FORMAT = 1;
const MANIFEST = 'strongroom-backup.json';
const DATABASE_ENTRY = 'database.sqlite';
const FILES_ENTRY = 'data';

export interface BackupManifest {
  format: number;
  createdAt: string;
  engine: 'sqlite' | 'postgres';
  /** Whether database.sqlite is in the archive (SQLite only). */
  database: boolean;
  /** The newest migration the copied database had applied, or null without a database. */
  lastMigration: string | null;
}

export const BACKUP_USAGE = `Usage:
  strongroom backup <file>
      Writes one archive (gzip-compressed tar, readable only by its owner) holding a consistent
      copy of the SQLite database, taken while the server keeps running, and every file under
      DATA_DIR. On PostgreSQL the archive holds the files only: dump the database with pg_dump
      (docs/operations.md).
  strongroom restore <file> [--force]
      Unpacks a backup into DATA_DIR (and the SQLite file DATABASE_URL names). Refuses a
      DATA_DIR that already holds files or a database unless --force is given, which replaces
      the database and overwrites files of the same name. Stop the server first.`;

export interface CommandIo {
  stdout: { write(text: string): unknown };
}

/** The live database files a backup copies through the backup API, never byte by byte. */
function liveDatabaseFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`];
}

function sqliteFileOf(config: Config): string | null {
  const path = sqlitePathOf(config.databaseUrl);
  if (path === null) return null;
  if (path === ':memory:' || path === '') throw new UsageError('DATABASE_URL names an in-memory SQLite database, which has nothing to back up or restore into.');
  return resolve(path);
}

/** `strongroom backup <file>`: answers what to print. */
export async function runBackup(args: readonly string[], config: Config): Promise<string> {
  const [target, ...rest] = args;
  if (target === undefined || target.startsWith('-') || rest.length > 0) throw new UsageError(BACKUP_USAGE);
  const output = resolve(target);
  if (!existsSync(dirname(output))) throw new UsageError(`backup: the folder ${dirname(output)} does not exist.`);
  if (existsSync(output) && (await stat(output)).isDirectory()) throw new UsageError(`backup: ${output} is a folder; name the archive file to write.`);
  const dataDir = resolve(config.dataDir);
  const databaseFile = sqliteFileOf(config);
  if (databaseFile !== null && !existsSync(databaseFile)) {
    throw new UsageError(`backup: there is no database at ${databaseFile} (DATABASE_URL / DATA_DIR); nothing to back up.`);
  }

  // Beside the archive, so that the final rename stays on one file system.
  const staging = await mkdtemp(join(dirname(output), '.strongroom-backup-'));
  const partial = `${output}.${randomUUID()}.partial`;
  try {
    let lastMigration: string | null = null;
    if (databaseFile !== null) lastMigration = await copySqlite(databaseFile, join(staging, DATABASE_ENTRY));
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      createdAt: new Date().toISOString(),
      engine: engineOf(config.databaseUrl),
      database: databaseFile !== null,
      lastMigration,
    };
    await writeFile(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    const entries = [MANIFEST, ...(databaseFile !== null ? [DATABASE_ENTRY] : [])];
    let fileCount = 0;
    if (existsSync(dataDir)) {
      // A link to DATA_DIR, packed with `follow`, puts its files under data/ in the archive.
      await symlink(dataDir, join(staging, FILES_ENTRY), 'dir');
      entries.push(FILES_ENTRY);
    }
    const skipped = new Set([...(databaseFile ? liveDatabaseFiles(databaseFile) : []), staging, output, partial]);
    await createTar(
      {
        file: partial,
        cwd: staging,
        gzip: true,
        portable: true,
        follow: true,
        // `portable` drops the times of folders (1970 in every listing); their real times are kept.
        onWriteEntry: (entry) => {
          entry.noMtime = false;
        },
        filter: (path, entry) => {
          if (!path.startsWith(`${FILES_ENTRY}/`)) return true;
          const real = join(dataDir, path.slice(FILES_ENTRY.length + 1));
          if (skipped.has(real) || [...skipped].some((s) => real.startsWith(`${s}${sep}`))) return false;
          // Another backup's or restore's working folder, if one runs at the same time.
          if (/^\.strongroom-(backup|restore)-/.test(basename(real))) return false;
          if ('isFile' in entry && entry.isFile()) fileCount++;
          return true;
        },
      },
      entries,
    );
    // The archive holds every secret of the installation (keys, the whole vault).
    await chmod(partial, 0o600);
    await rename(partial, output);
    const what = databaseFile !== null ? `the SQLite database (migration ${lastMigration ?? 'none'}) and ${fileCount} files from ${dataDir}` : `${fileCount} files from ${dataDir}`;
    const postgres =
      databaseFile === null ? '\nThe PostgreSQL database is not in this archive: dump it with pg_dump --format=custom (see docs/operations.md).' : '';
    return `Backed up ${what} to ${output}.${postgres}${filesOutside(config, dataDir)}\n`;
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(partial, { force: true });
  }
}

/** What the archive leaves out of the attachment and Send files, said after the summary (empty when they are under DATA_DIR). */
function filesOutside(config: Config, dataDir: string): string {
  if (config.fileStorage === 's3') {
    return `\nAttachment and Send files live in the S3 bucket ${config.s3Bucket ?? ''}, which is not in this archive: copy it with the bucket's own versioning or replication (see docs/operations.md).`;
  }
  const filesDir = resolve(filesDirOf(config));
  if (filesDir === dataDir || filesDir.startsWith(`${dataDir}${sep}`)) return '';
  return `\nAttachment and Send files are in FILES_DIR (${filesDir}), outside DATA_DIR, and not in this archive: copy that folder too, after this backup.`;
}

/**
 * Copies a SQLite database that may be in use through the online backup API, in one step (one
 * read transaction, so the copy is one consistent moment while the server keeps writing), then
 * checks the copy and answers the newest migration it had applied.
 */
async function copySqlite(source: string, destination: string): Promise<string | null> {
  const live = openSqliteFile(source, { fileMustExist: true });
  try {
    live.pragma('busy_timeout = 5000');
    // better-sqlite3's first step copies nothing; asking for every page in the next keeps the
    // whole copy in one step, under one read transaction.
    await live.backup(destination, { progress: () => 0x7fffffff });
  } finally {
    live.close();
  }
  const copy = openSqliteFile(destination, { fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy of ${source} failed its integrity check: ${String(check)}`);
    return newestMigration(copy);
  } finally {
    copy.close();
  }
}

function newestMigration(database: SqliteDatabase.Database): string | null {
  const table = database.prepare("select name from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
  if (!table) return null;
  const row = database.prepare('select name from kysely_migration order by name desc limit 1').get() as { name: string } | undefined;
  return row?.name ?? null;
}

/** `strongroom restore <file> [--force]`: answers what to print. */
export async function runRestore(args: readonly string[], config: Config): Promise<string> {
  const force = args.includes('--force');
  const positional = args.filter((arg) => arg !== '--force');
  const [source, ...rest] = positional;
  if (source === undefined || source.startsWith('-') || rest.length > 0) throw new UsageError(BACKUP_USAGE);
  const archive = resolve(source);
  if (!existsSync(archive) || !(await stat(archive)).isFile()) throw new UsageError(`restore: there is no file ${archive}.`);
  const dataDir = resolve(config.dataDir);
  const databaseFile = sqliteFileOf(config);

  await mkdir(dirname(dataDir), { recursive: true });
  const staging = await mkdtemp(join(dirname(dataDir), '.strongroom-restore-'));
  try {
    try {
      // tar refuses entries that would land outside the folder (absolute paths, `..`).
      await extractTar({ file: archive, cwd: staging, strict: true, preservePaths: false });
    } catch (error) {
      throw new UsageError(`restore: ${archive} is not a Strongroom backup (not a readable gzip-compressed tar archive: ${(error as Error).message}).`);
    }
    const manifest = readManifest(join(staging, MANIFEST), archive);
    if (manifest.database && databaseFile === null) {
      throw new UsageError('restore: this backup holds a SQLite database, but DATABASE_URL names PostgreSQL. Unset DATABASE_URL (or point it at a sqlite: file) to restore it.');
    }
    const present = existsSync(dataDir) ? (await readdir(dataDir)).filter((name) => !name.startsWith('.strongroom-')) : [];
    const databasePresent = databaseFile !== null && manifest.database && existsSync(databaseFile);
    if (!force && (present.length > 0 || databasePresent)) {
      throw new UsageError(
        `restore: ${databasePresent ? `a database exists at ${databaseFile}` : `${dataDir} is not empty`}; restore into a fresh DATA_DIR, or add --force to replace what is there (stop the server first).`,
      );
    }
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    let fileCount = 0;
    const files = join(staging, FILES_ENTRY);
    if (existsSync(files)) {
      fileCount = await countFiles(files);
      await cp(files, dataDir, { recursive: true, force: true, preserveTimestamps: true });
    }
    if (manifest.database && databaseFile !== null) {
      await mkdir(dirname(databaseFile), { recursive: true });
      for (const stale of liveDatabaseFiles(databaseFile)) await rm(stale, { force: true });
      await moveFile(join(staging, DATABASE_ENTRY), databaseFile);
    }
    const what = manifest.database ? `the SQLite database (migration ${manifest.lastMigration ?? 'none'}) to ${databaseFile} and ` : '';
    const postgres = manifest.database
      ? ''
      : '\nThis backup holds no database (it was taken on PostgreSQL): restore the database with pg_restore (see docs/operations.md).';
    return `Restored ${what}${fileCount} files to ${dataDir} from the backup of ${manifest.createdAt}. Start the server; it brings the schema up to date.${postgres}\n`;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

function readManifest(path: string, archive: string): BackupManifest {
  let manifest: Partial<BackupManifest>;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8')) as Partial<BackupManifest>;
  } catch {
    throw new UsageError(`restore: ${archive} is not a Strongroom backup (it has no readable ${MANIFEST}).`);
  }
  if (manifest.format !== BACKUP_FORMAT) {
    throw new UsageError(`restore: ${archive} is a backup of format ${String(manifest.format)}; this version reads format ${BACKUP_FORMAT}.`);
  }
  if (manifest.database && !existsSync(join(dirname(path), DATABASE_ENTRY))) {
    throw new UsageError(`restore: ${archive} names a database but does not hold ${DATABASE_ENTRY}; the archive is incomplete.`);
  }
  return manifest as BackupManifest;
}

async function countFiles(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).length;
}

async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    const partial = join(dirname(to), `.${basename(to)}.${randomUUID()}.partial`);
    await cp(from, partial);
    await rename(partial, to);
  }
  await chmod(to, 0o600);
}
