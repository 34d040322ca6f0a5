/**
 * The capacity generator's quick mode (#43), as CI runs it: a small population seeded over
 * HTTPS, every operation of the load model played and its answers checked, the password-login
 * flood shed. It asserts no time: only that every answer was right (the generator exits non-zero
 * on any error) and that each part ran. Figures come from `npm run bench -- capacity`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/program.js';
import { TEST_DATABASE_URL, TEST_ENGINE } from '../support/test-server.js';

function runQuick(): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'bench/capacity.ts')], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      BENCH_QUICK: '1',
      BENCH_ENGINES: TEST_ENGINE,
      ...(TEST_ENGINE === 'postgres' ? { BENCH_POSTGRES_URL: TEST_DATABASE_URL } : {}),
    },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe(`the capacity generator's quick mode (${TEST_ENGINE})`, () => {
  it('seeds the model population, plays every operation with checked answers, and sees logins shed', async () => {
    const { code, output } = await runQuick();
    expect(output).toMatch(/Held notifications connections: 66 \(0 failed\)/);
    for (const operation of ['login', 'refresh', 'sync', 'config', 'write', 'fetch', 'events', 'hubConnect', 'smSync', 'smLogin', 'directorySync']) {
      expect(output).toMatch(new RegExp(`\\| ${operation} \\| \\d+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| 0 \\|`));
    }
    expect(output).toMatch(/Password login flood: \d+ at once, \d+ answered with tokens, [1-9]\d* shed with 429 and Retry-After, 0 errors/);
    expect(output, output).not.toMatch(/error ×/);
    expect(code, output).toBe(0);
  }, 180_000);
});
