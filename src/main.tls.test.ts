import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'sr-main-tls-'));
let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function start(env: Record<string, string>) {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: { PATH: process.env.PATH, ...env } });
  child = proc;
  const output = { stdout: '', stderr: '' };
  proc.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output.stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('close', resolve));
  return { proc, exited, output };
}

async function waitFor(predicate: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the server program with TLS_MODE=self-signed', () => {
  it('serves HTTPS with its own CA and says how to trust it', async () => {
    const dataDir = join(dir, 'data');
    const run = start({ TLS_MODE: 'self-signed', DATA_DIR: dataDir, DATABASE_URL: 'sqlite::memory:', PORT: '0', LOG_LEVEL: 'info' });
    await waitFor(() => run.output.stdout.includes('Strongroom is ready'));
    const url = /Server listening at (https:\/\/127\.0\.0\.1:\d+)/.exec(run.output.stdout)?.[1];
    expect(url, run.output.stdout).toBeDefined();

    const caPath = join(dataDir, 'tls', 'ca.pem');
    expect(run.output.stderr).toContain(`NODE_EXTRA_CA_CERTS=${caPath} bw login`);
    const logLine = run.output.stdout.split('\n').find((line) => line.includes('local certificate authority'));
    expect(JSON.parse(logLine ?? '{}')).toMatchObject({ level: 30, tls: { caFile: caPath, caCreated: true, issued: 'new' } });

    const dispatcher = new Agent({ connect: { ca: readFileSync(caPath, 'utf8') } });
    const response = await fetch(`${url}/api/alive`, { dispatcher });
    expect(response.status).toBe(200);
    await dispatcher.close();
  }, 40_000);

  it('exits with status 2 and one line naming DATA_DIR when it cannot write there', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const run = start({ TLS_MODE: 'self-signed', DATA_DIR: file, DATABASE_URL: 'sqlite::memory:', PORT: '0' });
    expect(await run.exited).toBe(2);
    expect(run.output.stderr.trim().split('\n')).toEqual([
      `Strongroom cannot start: DATA_DIR: cannot create ${file}/tls for TLS_MODE=self-signed: a part of the path is not a directory (ENOTDIR)`,
    ]);
  }, 40_000);
});
