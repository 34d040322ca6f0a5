/**
 * The README's first screen, followed as a new user would: its commands, read from README.md
 * itself, run in a fresh folder with a fresh data directory, up to the official `bw` logged in
 * over HTTPS trusting only the CA the server made. Where the test must differ from a person at a
 * terminal it says so: `npm ci` has already run (it is what runs this suite), `bw` is the
 * project's own copy rather than a global install, the port is a free one rather than 8080, and
 * passwords come from standard input and `--passwordenv` rather than from prompts.
 *
 * The first screen runs the server on its embedded SQLite default, so the test runs in the suite's
 * SQLite pass only: in the PostgreSQL pass the server would inherit the suite's DATABASE_URL and
 * find the account of an earlier run there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/program.js';
import { TEST_ENGINE } from '../support/test-server.js';

const root = resolve(import.meta.dirname, '../..');
const PASSWORD = 'a first-run master password';

/** The shell blocks of the README section with this heading, each as its command lines. */
function readmeBlocks(heading: string): string[][] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  expect(start, `README.md has a "## ${heading}" section`).toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) =>
    match[1]!.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#')),
  );
}


function run(command: string, options: { cwd: string; env: Record<string, string>; input?: string }) {
  // A process group of its own, so that the server under `npm start` (bash, npm, sh, node) can be stopped whole.
  const child = spawn('bash', ['-c', command], { cwd: options.cwd, env: { ...process.env, ...options.env }, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.input ?? '');
  const exited = new Promise<number | null>((done) => child.on('close', done));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

const folder = mkdtempSync(join(tmpdir(), 'strongroom-first-run-'));
let server: ChildProcess | undefined;
afterAll(() => {
  // The whole group: killing bash alone left npm start's node serving after the suite.
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(folder, { recursive: true, force: true });
});

describe.skipIf(TEST_ENGINE !== 'sqlite')('the README first screen', () => {
  it('takes a new user from npm start to a logged-in official bw over HTTPS', async () => {
    const [start = [], client = []] = readmeBlocks('First run');
    expect(start, 'the first block starts the server').toEqual(['npm ci', 'TLS_MODE=self-signed npm start']);
    expect(client, 'the second block creates the account and logs bw in').toHaveLength(5);

    // A fresh folder that is the project (its files linked in) with no data directory yet.
    for (const entry of ['package.json', 'package-lock.json', 'node_modules', 'dist', 'scripts', 'src', 'tsconfig.json']) {
      symlinkSync(join(root, entry), join(folder, entry));
    }
    expect(existsSync(join(folder, 'data'))).toBe(false);
    const port = await freePort();
    const env = { PORT: String(port), LOG_LEVEL: 'info' };

    const started = run(start[1]!, { cwd: folder, env });
    server = started.child;
    const deadline = Date.now() + 150_000;
    while (!started.output().stdout.includes('Strongroom is ready')) {
      if (Date.now() > deadline || started.child.exitCode !== null) {
        throw new Error(`the server did not start:\n${started.output().stderr}\n${started.output().stdout}`);
      }
      await new Promise((done) => setTimeout(done, 200));
    }
    // The server says where its CA is, as the README promises.
    expect(started.output().stderr).toContain('data/tls/ca.pem');

    const script = client
      .filter((line) => !line.startsWith('npm install --global @bitwarden/cli'))
      .map((line) => line.replaceAll('localhost:8080', `localhost:${port}`))
      .map((line) => (line.startsWith('bw login ') ? `${line} --passwordenv BW_PASSWORD` : line));
    expect(script).toHaveLength(4);
    const session = run(['set -euo pipefail', ...script].join('\n'), {
      cwd: folder,
      input: `${PASSWORD}\n`,
      env: {
        ...env,
        PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
        BITWARDENCLI_APPDATA_DIR: join(folder, 'bw'),
        BW_NOINTERACTION: 'true',
        BW_PASSWORD: PASSWORD,
      },
    });
    const code = await session.exited;
    const { stdout, stderr } = session.output();
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('You are logged in!');
  }, 240_000);

  it('starts without compiling again when nothing changed since the last build', async () => {
    // The first run builds if src/ changed (in CI, npm ci has already built); the second must not.
    const first = run('node scripts/build-if-stale.mjs', { cwd: root, env: {} });
    expect(await first.exited, first.output().stderr).toBe(0);
    const stamp = join(root, 'dist', '.build-stamp');
    const built = statSync(stamp).mtimeMs;
    const second = run('node scripts/build-if-stale.mjs', { cwd: root, env: {} });
    expect(await second.exited).toBe(0);
    expect(second.output().stderr).not.toContain('Building');
    expect(statSync(stamp).mtimeMs).toBe(built);
  }, 120_000);
});
