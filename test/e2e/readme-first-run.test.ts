/**
 * The README's first screen, followed as a new user would: its commands, read from README.md
 * itself, run in a fresh empty folder with a fresh data directory, from the `strongroom` the packed
 * tarball installed, up to the official `bw` logged in over HTTPS trusting only the CA the server
 * made. Where the test must differ from a person at a terminal it says so: `npm ci`, `npm pack`
 * and the global install ran before the suite (scripts/install-tarball.sh, which .ci/run calls,
 * into the prefix STRONGROOM_TEST_PREFIX names: installing takes minutes, too long for a test),
 * `bw` is the project's own copy rather than a global install, the port is a free one rather than
 * 8080, and passwords come from standard input and `--passwordenv` rather than from prompts.
 *
 * The first screen runs the server on its embedded SQLite default, so the test runs in the suite's
 * SQLite pass only: in the PostgreSQL pass the server would inherit the suite's DATABASE_URL and
 * find the account of an earlier run there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { builtinModules } from 'node:module';
import { connect } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/program.js';
import { testService } from '../support/services.js';
import { TEST_ENGINE } from '../support/test-server.js';

const root = resolve(import.meta.dirname, '../..');
const PASSWORD = 'a first-run master password';
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
/** Where scripts/install-tarball.sh installed the packed tarball (.ci/run sets it). */
const prefix = testService('installedPackage');

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

/** Whether something accepts connections on this loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

const folder = mkdtempSync(join(tmpdir(), 'strongroom-first-run-'));
let server: ChildProcess | undefined;
afterAll(() => {
  // The whole group: killing bash alone could leave the server serving after the suite.
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
  it.skipIf(!prefix)('takes a new user from the installed tarball to a logged-in official bw over HTTPS', async () => {
    const [start = [], client = []] = readmeBlocks('First run');
    expect(start, 'the first block installs the package and starts the server').toEqual([
      'npm ci',
      'npm pack',
      `npm install --global ./strongroom-${packageJson.version}.tgz`,
      'TLS_MODE=self-signed strongroom serve',
    ]);
    expect(client, 'the second block creates the account and logs bw in').toHaveLength(5);

    // The prefix holds this release's package, and it holds no tests and no sources.
    const bin = join(prefix!, 'bin');
    const installed = join(prefix!, 'lib', 'node_modules', 'strongroom');
    expect(readFileSync(join(installed, 'package.json'), 'utf8'), 'STRONGROOM_TEST_PREFIX holds an older install').toContain(`"version": "${packageJson.version}"`);
    expect(readdirSync(installed).sort()).toEqual(['.env.example', 'CHANGELOG.md', 'README.md', 'dist', 'docs', 'node_modules', 'npm-shrinkwrap.json', 'package.json']);

    // An empty folder, no checkout: only the installed command on the PATH.
    expect(readdirSync(folder)).toEqual([]);
    const port = await freePort();
    const env = { PORT: String(port), LOG_LEVEL: 'info', PATH: `${bin}:${process.env.PATH ?? ''}` };

    const started = run(start[3]!, { cwd: folder, env });
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
      .map((line) => line.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`))
      .map((line) => (line.startsWith('bw login ') ? `${line} --passwordenv BW_PASSWORD` : line));
    expect(script).toHaveLength(4);
    const session = run(['set -euo pipefail', ...script].join('\n'), {
      cwd: folder,
      input: `${PASSWORD}\n`,
      env: {
        ...env,
        PATH: `${bin}:${join(root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
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

  it('stops the server when npm start is stopped by its process id', async () => {
    // The start script execs node in place of npm's shell: npm forwards SIGTERM to its one child,
    // the server, which drains and exits; a shell in between would die and leave node serving.
    const port = await freePort();
    const data = mkdtempSync(join(tmpdir(), 'strongroom-npm-start-'));
    const npm = spawn('npm', ['start'], { cwd: root, env: { ...process.env, PORT: String(port), DATA_DIR: data, LOG_LEVEL: 'info' } });
    let stdout = '';
    npm.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise((done) => npm.on('close', done));
    try {
      const deadline = Date.now() + 60_000;
      while (!stdout.includes('Strongroom is ready')) {
        if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`npm start did not start the server:\n${stdout}`);
        await new Promise((done) => setTimeout(done, 100));
      }
      npm.kill('SIGTERM');
      await exited;
      const freed = Date.now() + 15_000;
      while (await listening(port)) {
        if (Date.now() > freed) throw new Error(`port ${port} still served after npm start was stopped`);
        await new Promise((done) => setTimeout(done, 100));
      }
      expect(stdout).toContain('"msg":"stopped"');
    } finally {
      npm.kill('SIGKILL');
      rmSync(data, { recursive: true, force: true });
    }
  }, 90_000);

  it('imports at run time only packages the install brings (dependencies, not devDependencies)', () => {
    // The bundle leaves some packages in node_modules (scripts/build-if-stale.mjs); a global
    // install has only `dependencies`, so a devDependency imported here would fail there.
    const specifiers = new Set<string>();
    for (const file of readdirSync(join(root, 'dist')).filter((name) => name.endsWith('.js'))) {
      for (const [, specifier] of readFileSync(join(root, 'dist', file), 'utf8').matchAll(/(?:\bfrom|\bimport\(|\brequire\()\s*"((?:@[a-z0-9._-]+\/)?[a-z0-9_-][a-z0-9._-]*)(?:\/[^"]*)?"/g)) {
        if (!specifier!.startsWith('node:') && !builtinModules.includes(specifier!)) specifiers.add(specifier!);
      }
    }
    expect(specifiers.size, 'the scan finds the packages left out of the bundle').toBeGreaterThan(10);
    expect([...specifiers].filter((name) => !(name in packageJson.dependencies))).toEqual([]);
  });

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
