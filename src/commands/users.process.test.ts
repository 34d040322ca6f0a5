import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, TEST_ENGINE } from '../../test/support/test-server.js';
import { programArgs } from '../../test/support/program.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';

/** `strongroom users …` as its own process, as an operator runs it: real standard streams, real exit codes. */
const root = new URL('../..', import.meta.url).pathname;

function strongroom(args: string[], env: Record<string, string>, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...programArgs(), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', PASSWORD_ITERATIONS: '100000', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let databaseUrl: string;
let drop: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  // A child process cannot see this process's in-memory SQLite database: use a file.
  const fresh = TEST_ENGINE === 'sqlite' ? { url: `sqlite:${join(mkdtempSync(join(tmpdir(), 'sr-users-')), 'db.sqlite')}`, drop } : await freshDatabaseUrl();
  databaseUrl = fresh.url;
  drop = () => fresh.drop();
  const database = openDatabase(databaseUrl);
  await migrateToLatest(database);
  await database.close();
});

afterAll(async () => {
  await drop();
});

describe('strongroom users, as a process', { timeout: 60_000 }, () => {
  it('creates an account from a password piped on standard input, and lists it as JSON', async () => {
    const created = await strongroom(['users', 'create', '--email', 'piped@example.com', '--name', 'Piped'], { DATABASE_URL: databaseUrl }, 'a piped master password\n');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created user piped@example\.com \([0-9a-f-]{36}\)\.\n$/);

    const listed = await strongroom(['users', 'list', '--json'], { DATABASE_URL: databaseUrl });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ email: 'piped@example.com', name: 'Piped', disabled: false })]);
  });

  it('refuses a password on the command line with exit code 2', async () => {
    const res = await strongroom(['users', 'create', '--email', 'argv@example.com', '--password', 'hunter2-hunter2'], { DATABASE_URL: databaseUrl });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^The password is not accepted on the command line[^\n]*\n$/);
    expect(res.stderr).not.toContain('hunter2');
  });

  it('answers a missing database with exit code 3 and one line, without a stack trace or a new file', async () => {
    const res = await strongroom(['users', 'list'], { DATABASE_URL: 'sqlite:/nonexistent-strongroom-process/dir/x.sqlite' });
    expect(res.code).toBe(3);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      'There is no database at /nonexistent-strongroom-process/dir/x.sqlite: check DATABASE_URL or DATA_DIR, or create it with "strongroom migrate".\n',
    );
    expect(existsSync('/nonexistent-strongroom-process')).toBe(false);
  });
});
