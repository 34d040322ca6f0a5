import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killPrograms, startProgram, waitFor } from '../test/support/program.js';
import { processUser } from './config/file-problems.js';

const dir = mkdtempSync(join(tmpdir(), 'sr-main-tls-'));
afterEach(killPrograms);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the server program with TLS_MODE=self-signed', () => {
  it('serves HTTPS with its own CA and says how to trust it', async () => {
    const dataDir = join(dir, 'data');
    const run = startProgram({ TLS_MODE: 'self-signed', DATA_DIR: dataDir, DATABASE_URL: 'sqlite::memory:', PORT: '0', LOG_LEVEL: 'info' });
    // Starting creates a CA and a certificate: allow for a busy machine.
    await waitFor(() => run.stdout().includes('Strongroom is ready'), 45_000);
    const url = /Server listening at (https:\/\/127\.0\.0\.1:\d+)/.exec(run.stdout())?.[1];
    expect(url, run.stdout()).toBeDefined();

    const caPath = join(dataDir, 'tls', 'ca.pem');
    expect(run.stderr()).toContain(`NODE_EXTRA_CA_CERTS=${caPath} bw login`);
    const logLine = run.stdout().split('\n').find((line) => line.includes('local certificate authority'));
    expect(JSON.parse(logLine ?? '{}')).toMatchObject({ level: 30, tls: { caFile: caPath, caCreated: true, issued: 'new' } });

    const dispatcher = new Agent({ connect: { ca: readFileSync(caPath, 'utf8') } });
    const response = await fetch(`${url}/api/alive`, { dispatcher });
    expect(response.status).toBe(200);
    await dispatcher.close();
  }, 60_000);

  it('exits with status 2 and one line naming DATA_DIR when it cannot write there', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const run = startProgram({ TLS_MODE: 'self-signed', DATA_DIR: file, DATABASE_URL: 'sqlite::memory:', PORT: '0' });
    expect(await run.exited).toBe(2);
    expect(run.stderr().trim().split('\n')).toEqual([
      `Strongroom cannot start: DATA_DIR: cannot create ${file}/tls for TLS_MODE=self-signed: ${file} is a file, not a folder; set DATA_DIR to a folder ${processUser()} may write`,
    ]);
  }, 40_000);
});
