import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as createTar, list as listTar } from 'tar';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../test/support/test-server.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { UsageError } from '../shared/startup-error.js';
import { runBackup, runRestore } from './backup.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'strongroom-backup-unit-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function sqliteDataDir(name: string): Promise<string> {
  const dir = join(root, name);
  const database = openDatabase(`sqlite:${join(dir, 'strongroom.sqlite')}`);
  await migrateToLatest(database);
  await database.db.insertInto('server_keys').values({ purpose: 'unit-test', kid: 'k1', private_jwk: 'secret', public_jwk: '{}', creation_date: new Date().toISOString() }).execute();
  await database.close();
  await mkdir(join(dir, 'attachments'), { recursive: true });
  await writeFile(join(dir, 'attachments', 'a.bin'), 'attachment');
  return dir;
}

async function entries(file: string): Promise<string[]> {
  const names: string[] = [];
  await listTar({ file, onReadEntry: (entry) => names.push(entry.path) });
  return names.sort();
}

describe('strongroom backup / restore', () => {
  it('archives the database copy and the files, never the live database files, readable only by its owner', async () => {
    const dataDir = await sqliteDataDir('live');
    const out = join(root, 'b.tgz');
    const printed = await runBackup([out], testConfig({ DATA_DIR: dataDir }));
    expect(printed).toContain('and 1 files from');
    expect(await entries(out)).toEqual(['data/', 'data/attachments/', 'data/attachments/a.bin', 'database.sqlite', 'strongroom-backup.json']);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    expect(printed).not.toContain('not in this archive');
  });

  it('dates every entry, folders included, with its real time rather than 1970', async () => {
    const dataDir = await sqliteDataDir('dated');
    const out = join(root, 'dated.tgz');
    const before = Date.now() - 60_000;
    await runBackup([out], testConfig({ DATA_DIR: dataDir }));
    const dates: [string, number | undefined][] = [];
    await listTar({ file: out, onReadEntry: (entry) => dates.push([entry.path, entry.mtime?.getTime()]) });
    expect(dates.length).toBe(5);
    for (const [path, time] of dates) expect(time, path).toBeGreaterThan(before);
  });

  it('says so when the attachment and Send files are outside DATA_DIR (FILES_DIR) or in S3', async () => {
    const dataDir = await sqliteDataDir('files-apart');
    const filesDir = join(root, 'elsewhere');
    const apart = await runBackup([join(root, 'apart.tgz')], testConfig({ DATA_DIR: dataDir, FILES_DIR: filesDir }));
    expect(apart).toContain(`Attachment and Send files are in FILES_DIR (${filesDir}), outside DATA_DIR, and not in this archive`);
    const inside = await runBackup([join(root, 'inside.tgz')], testConfig({ DATA_DIR: dataDir, FILES_DIR: join(dataDir, 'files') }));
    expect(inside).not.toContain('not in this archive');
    const s3 = await runBackup([join(root, 's3.tgz')], testConfig({ DATA_DIR: dataDir, FILE_STORAGE: 's3', S3_BUCKET: 'vault-files' }));
    expect(s3).toContain('the S3 bucket vault-files, which is not in this archive');
  });

  it('restores the rows and files; a second restore needs --force, which replaces the database', async () => {
    const dataDir = await sqliteDataDir('live');
    const out = join(root, 'b.tgz');
    await runBackup([out], testConfig({ DATA_DIR: dataDir }));
    const target = join(root, 'fresh');
    expect(await runRestore([out], testConfig({ DATA_DIR: target }))).toContain('Restored the SQLite database');
    const restored = openDatabase(`sqlite:${join(target, 'strongroom.sqlite')}`);
    expect(await restored.db.selectFrom('server_keys').select('private_jwk').where('purpose', '=', 'unit-test').executeTakeFirst()).toEqual({ private_jwk: 'secret' });
    await restored.db.deleteFrom('server_keys').where('purpose', '=', 'unit-test').execute();
    await restored.close();
    expect(await readFile(join(target, 'attachments', 'a.bin'), 'utf8')).toBe('attachment');

    await expect(runRestore([out], testConfig({ DATA_DIR: target }))).rejects.toThrow(/a database exists at .*; restore into a fresh DATA_DIR, or add --force/);
    await runRestore([out, '--force'], testConfig({ DATA_DIR: target }));
    const again = openDatabase(`sqlite:${join(target, 'strongroom.sqlite')}`);
    expect(await again.db.selectFrom('server_keys').select('kid').where('purpose', '=', 'unit-test').executeTakeFirst()).toEqual({ kid: 'k1' });
    await again.close();
  });

  it('refuses a folder that holds files, a file that is not a backup and an archive without a manifest', async () => {
    const dataDir = await sqliteDataDir('live');
    const out = join(root, 'b.tgz');
    await runBackup([out], testConfig({ DATA_DIR: dataDir }));
    const busy = join(root, 'busy');
    await mkdir(busy);
    await writeFile(join(busy, 'something'), 'x');
    await expect(runRestore([out], testConfig({ DATA_DIR: busy }))).rejects.toThrow(`${busy} is not empty`);

    await writeFile(join(root, 'junk'), 'not an archive');
    await expect(runRestore([join(root, 'junk')], testConfig({ DATA_DIR: join(root, 'x') }))).rejects.toThrow('is not a Strongroom backup');
    await writeFile(join(root, 'plain.txt'), 'x');
    await createTar({ file: join(root, 'other.tgz'), gzip: true, cwd: root }, ['plain.txt']);
    await expect(runRestore([join(root, 'other.tgz')], testConfig({ DATA_DIR: join(root, 'x') }))).rejects.toThrow('has no readable strongroom-backup.json');
    expect(existsSync(join(root, 'x', 'plain.txt'))).toBe(false);
  });

  it('answers usage errors for a missing file, an in-memory database and a missing folder', async () => {
    await expect(runBackup([], testConfig())).rejects.toBeInstanceOf(UsageError);
    await expect(runBackup([join(root, 'b.tgz')], testConfig({ DATABASE_URL: 'sqlite::memory:' }))).rejects.toThrow('in-memory SQLite database');
    await expect(runBackup([join(root, 'nowhere', 'b.tgz')], testConfig({ DATA_DIR: root }))).rejects.toThrow('does not exist');
    await expect(runBackup([join(root, 'b.tgz')], testConfig({ DATA_DIR: join(root, 'empty') }))).rejects.toThrow('there is no database at');
    await expect(runRestore([join(root, 'missing.tgz')], testConfig())).rejects.toThrow('there is no file');
  });

  it('on PostgreSQL archives the files only, says to use pg_dump, and restores them', async () => {
    const dataDir = join(root, 'pg-data');
    await mkdir(join(dataDir, 'attachments'), { recursive: true });
    await writeFile(join(dataDir, 'attachments', 'b.bin'), 'pg attachment');
    const pg = { DATA_DIR: dataDir, DATABASE_URL: 'postgres://strongroom@127.0.0.1:1/strongroom' };
    const out = join(root, 'pg.tgz');
    expect(await runBackup([out], testConfig(pg))).toContain('dump it with pg_dump');
    expect(await entries(out)).toEqual(['data/', 'data/attachments/', 'data/attachments/b.bin', 'strongroom-backup.json']);
    const target = join(root, 'pg-fresh');
    expect(await runRestore([out], testConfig({ ...pg, DATA_DIR: target }))).toContain('restore the database with pg_restore');
    expect(await readFile(join(target, 'attachments', 'b.bin'), 'utf8')).toBe('pg attachment');
  });

  it('refuses to restore a SQLite backup while DATABASE_URL names PostgreSQL', async () => {
    const dataDir = await sqliteDataDir('live');
    const out = join(root, 'b.tgz');
    await runBackup([out], testConfig({ DATA_DIR: dataDir }));
    await expect(runRestore([out], testConfig({ DATA_DIR: join(root, 'y'), DATABASE_URL: 'postgres://strongroom@127.0.0.1:1/strongroom' }))).rejects.toThrow(
      'this backup holds a SQLite database, but DATABASE_URL names PostgreSQL',
    );
  });
});
