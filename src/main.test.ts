import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../test/support/test-server.js';

const root = new URL('../', import.meta.url).pathname;
let child: ChildProcess | undefined;
let blackhole: Server | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  blackhole?.close();
});

function start(env: Record<string, string>) {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: { PATH: process.env.PATH, ...env } });
  child = proc;
  let output = '';
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('close', resolve));
  return { proc, exited, output: () => output };
}

async function waitFor(predicate: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the server program', () => {
  it('refuses to start on invalid settings, listing all of them', async () => {
    const run = start({ PORT: 'x', DEPLOYMENT: 'moon' });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('PORT:');
    expect(run.output()).toContain('DEPLOYMENT:');
  });

  it('drains in-flight requests on SIGTERM, then exits cleanly', async () => {
    // A broker that never answers makes /healthz/extended take about two seconds.
    blackhole = createServer(() => undefined);
    await new Promise<void>((resolve) => blackhole!.listen(0, '127.0.0.1', resolve));
    const address = blackhole.address();
    const brokerPort = typeof address === 'object' && address ? address.port : 0;
    const fresh = await freshDatabaseUrl();
    const run = start({
      DATABASE_URL: fresh.url === 'sqlite::memory:' ? 'sqlite::memory:' : fresh.url,
      PORT: '0',
      HEALTH_ENABLED: 'true',
      AMQP_URL: `amqp://127.0.0.1:${brokerPort}`,
      LOG_LEVEL: 'info',
    });
    await waitFor(() => run.output().includes('Server listening at'));
    const url = /Server listening at (http:\/\/[^"\s]+)/.exec(run.output())?.[1];
    expect(url).toBeDefined();

    const inFlight = fetch(`${url}/api/healthz/extended`);
    // Stop only once the server has the request (it logs each one it receives at info).
    await waitFor(() => run.output().includes('/api/healthz/extended'));
    run.proc.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe('Degraded');
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('stopped');
    await expect(fetch(`${url}/api/alive`)).rejects.toThrow();
    await fresh.drop();
  }, 40_000);
});
