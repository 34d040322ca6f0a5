import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DatabaseNotReady, openReadyDatabase } from '../db/open.js';
import { causeOf } from '../shared/startup-error.js';
import { loadConfig } from './config.js';
import { configProblems } from '../../test/support/config-problems.js';
import { processUser } from './file-problems.js';

const scratch = mkdtempSync(join(tmpdir(), 'strongroom-files-'));
const aFile = join(scratch, 'a-file');
writeFileSync(aFile, 'not a folder\n');

const problemsOf = (env: Record<string, string>): string[] => configProblems(() => loadConfig(env));

async function databaseProblem(url: string): Promise<string> {
  const error = await openReadyDatabase(url, { poolSize: 1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DatabaseNotReady);
  return `${(error as DatabaseNotReady).message}: ${causeOf((error as DatabaseNotReady).reason)}`;
}

/**
 * Runs `code` (an ES module that prints what it finds) as a user who may not write `folder`:
 * root ignores permissions, so as root it runs as nobody, and otherwise as this user with the
 * folder made read-only.
 */
async function asUnprivileged(folder: string, code: string): Promise<{ output: string; user: string }> {
  const root = process.getuid?.() === 0;
  if (root) chmodSync(folder, 0o755);
  else chmodSync(folder, 0o555);
  const user = root ? 'user nobody (uid 65534)' : processUser();
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: resolve(import.meta.dirname, '../..'),
    ...(root ? { uid: 65534, gid: 65534 } : {}),
  });
  return { output: stdout.trim(), user };
}

describe('file-system problems name the path, the permission and the setting', () => {
  it('a SQLite database under a file: the file in the way and the settings to change', async () => {
    expect(await databaseProblem(`sqlite:${aFile}/data/strongroom.sqlite`)).toBe(
      `cannot open the SQLite database ${aFile}/data/strongroom.sqlite: ${aFile} is a file, not a folder; set DATABASE_URL (or DATA_DIR) to a place ${processUser()} may write`,
    );
  });

  it('a SQLite database in a folder this user may not write: the user, the folder and its owner and mode', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'strongroom-locked-'));
    const database = join(folder, 'strongroom.sqlite');
    const { output, user } = await asUnprivileged(
      folder,
      `import { openReadyDatabase } from './src/db/open.ts';
       import { causeOf } from './src/shared/startup-error.ts';
       await openReadyDatabase(${JSON.stringify(`sqlite:${database}`)}, { poolSize: 1 }).then(() => console.log('opened'), (e) => console.log(e.message + ': ' + causeOf(e.reason)));`,
    );
    expect(output).toMatch(
      new RegExp(
        `^cannot open the SQLite database ${database}: permission denied for ${escape(user)} on ${folder} \\(folder not writable; owner uid \\d+, mode 5?755\\); make it writable for ${escape(user)}, or set DATABASE_URL \\(or DATA_DIR\\) to a place ${escape(user)} may write$`,
      ),
    );
  }, 30_000);

  it('a read-only DATA_DIR with TLS_MODE=self-signed: the folder, not ENOENT', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'strongroom-locked-'));
    const { output, user } = await asUnprivileged(
      folder,
      `import { ensureSelfSignedCertificate } from './src/tls/self-signed.ts';
       await ensureSelfSignedCertificate({ dataDir: ${JSON.stringify(folder)}, hostnames: ['localhost'] }).then(() => console.log('made'), (e) => console.log(e.message));`,
    );
    expect(output).toMatch(
      new RegExp(`^DATA_DIR: cannot create ${folder}/tls for TLS_MODE=self-signed: permission denied for ${escape(user)} on ${folder} \\(folder not writable; owner uid \\d+, mode 5?755\\); make it writable for ${escape(user)}, or set DATA_DIR to a folder ${escape(user)} may write$`),
    );
  }, 30_000);

  it('FILES_DIR that cannot be written is refused at start, not at the first upload', () => {
    expect(problemsOf({ FILES_DIR: join(aFile, 'files') })).toEqual([
      `FILES_DIR: cannot write attachments to ${aFile}/files: ${aFile} is a file, not a folder; set FILES_DIR to a folder ${processUser()} may write`,
    ]);
    const fine = join(scratch, 'files');
    mkdirSync(fine);
    expect(problemsOf({ FILES_DIR: fine })).toEqual([]);
    expect(problemsOf({ FILES_DIR: join(aFile, 'files'), FILE_STORAGE: 's3', S3_BUCKET: 'b' })).toEqual([]);
  });

  it('WEB_VAULT_DIR that does not exist or is a file', () => {
    expect(problemsOf({ WEB_VAULT_DIR: join(scratch, 'none') })).toEqual([
      `WEB_VAULT_DIR: ${join(scratch, 'none')} does not exist; unpack a web vault there (docs/web-vault.md), or unset WEB_VAULT_DIR`,
    ]);
    expect(problemsOf({ WEB_VAULT_DIR: aFile })).toEqual([`WEB_VAULT_DIR: ${aFile} is a file, not a folder; set WEB_VAULT_DIR to the folder holding index.html`]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
