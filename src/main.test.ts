import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { WebSocket } from 'ws';
import { freePort, killPrograms, startProgram as start, waitFor } from '../test/support/program.js';
import { freshDatabaseUrl } from '../test/support/test-server.js';

let blackhole: Server | undefined;
const sockets: Socket[] = [];
afterEach(() => {
  killPrograms();
  blackhole?.close();
  for (const socket of sockets.splice(0)) socket.destroy();
});

/** GET over a kept-alive agent; the status, or 0 when no answer came within the time. */
function get(url: string, agent?: Agent, timeoutMs = 5_000): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve(0);
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

async function waitForServer(url: string): Promise<void> {
  // Generous: a start on a CI machine under a load of 25 has taken over 20 s.
  const deadline = Date.now() + 45_000;
  while ((await get(`${url}/api/alive`, undefined, 1_000)) !== 200) {
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}


describe('the server program', () => {
  it('refuses to start on invalid settings, listing all of them', async () => {
    // From source, as `npm run dev` runs it; every other test here runs the build operators run.
    const run = start({ PORT: 'x', DEPLOYMENT: 'moon' }, { program: 'source' });
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
      LOG_LEVEL: 'debug',
    });
    await waitFor(() => run.output().includes('Server listening at'));
    const url = /Server listening at (http:\/\/[^"\s]+)/.exec(run.output())?.[1];
    expect(url).toBeDefined();

    const inFlight = fetch(`${url}/api/healthz/extended`);
    // Stop only once the server has the request (at debug it logs each one on arrival).
    await waitFor(() => run.output().includes('/api/healthz/extended'));
    run.proc.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe('Degraded');
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('stopped');
    await expect(fetch(`${url}/api/alive`)).rejects.toThrow();
    await fresh.drop();
  }, 75_000);

  it('stops at once, exiting 1, on a second signal while it drains', async () => {
    // A broker that never answers holds /healthz/extended in flight for about two seconds.
    blackhole = createServer(() => undefined);
    await new Promise<void>((resolve) => blackhole!.listen(0, '127.0.0.1', resolve));
    const address = blackhole.address();
    const brokerPort = typeof address === 'object' && address ? address.port : 0;
    const port = await freePort();
    const run = start({
      DATABASE_URL: 'sqlite::memory:',
      PORT: String(port),
      HEALTH_ENABLED: 'true',
      AMQP_URL: `amqp://127.0.0.1:${brokerPort}`,
      // At debug a request is also logged on arrival, which tells that it is in flight.
      LOG_LEVEL: 'debug',
      SHUTDOWN_TIMEOUT_SECONDS: '60',
    });
    await waitForServer(`http://127.0.0.1:${port}`);
    const inFlight = get(`http://127.0.0.1:${port}/api/healthz/extended`, undefined, 30_000);
    await waitFor(() => run.output().includes('/api/healthz/extended'));
    run.proc.kill('SIGINT');
    await waitFor(() => run.output().includes('shutting down'));
    run.proc.kill('SIGINT');
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('stopping at once');
    expect(await inFlight).toBe(0);
  }, 75_000);

  it('closes a connection that never sent a request at once on SIGTERM, and exits 0', async () => {
    const port = await freePort();
    const run = start({ DATABASE_URL: 'sqlite::memory:', PORT: String(port), SHUTDOWN_TIMEOUT_SECONDS: '20' });
    await waitForServer(`http://127.0.0.1:${port}`);
    // One kept-alive connection that served a request, and one that never carried any.
    const agent = new Agent({ keepAlive: true });
    expect(await get(`http://127.0.0.1:${port}/api/alive`, agent)).toBe(200);
    const silent = connect(port, '127.0.0.1');
    sockets.push(silent);
    silent.on('error', () => undefined);
    await new Promise((resolve) => silent.once('connect', resolve));

    // Without the fix the silent connection holds the drain until the timeout, which exits 1.
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    agent.destroy();
  }, 75_000);

  it('closes hub WebSockets on SIGTERM with a SignalR Close message that allows reconnecting, and exits 0', async () => {
    const port = await freePort();
    const run = start({ DATABASE_URL: 'sqlite::memory:', PORT: String(port), SHUTDOWN_TIMEOUT_SECONDS: '20' });
    await waitForServer(`http://127.0.0.1:${port}`);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/notifications/anonymous-hub?Token=${randomUUID()}`);
    const frames: Buffer[] = [];
    ws.on('message', (data) => frames.push(Buffer.from(data as Buffer)));
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send('{"protocol":"messagepack","version":1}\u001e');
    await waitFor(() => frames.length === 1);
    run.proc.kill('SIGTERM');
    expect(await closed).toBe(1000);
    // [7, nil, true]: Close, no error, allowReconnect (the process must not cut the socket before it).
    expect(frames.slice(1).map((frame) => frame.toString('hex'))).toContain('0493' + '07c0c3');
    expect(await run.exited).toBe(0);
  }, 75_000);

  it.each([
    ['blocked: its reader stops reading', 'blocked'],
    ['gone: its reader closed the pipe', 'gone'],
  ])('keeps serving and stops on time when its log output is %s', async (_title, mode) => {
    const port = await freePort();
    const run = start(
      { DATABASE_URL: 'sqlite::memory:', PORT: String(port), LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_SECONDS: '3' },
      { readStdout: false },
    );
    run.proc.stdout.pause();
    await waitForServer(`http://127.0.0.1:${port}`);
    if (mode === 'gone') run.proc.stdout.destroy();
    // Each request logs two lines of about 300 bytes: far more than a pipe's 64 KiB buffer.
    const agent = new Agent({ keepAlive: true });
    for (let i = 0; i < 600; i++) {
      expect(await get(`http://127.0.0.1:${port}/api/alive`, agent, 3_000)).toBe(200);
    }
    agent.destroy();
    // Exit 0 means the drain finished before the 3 s timeout; a frozen process never exits at all.
    run.proc.kill('SIGTERM');
    const code = await Promise.race([run.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000))]);
    expect(code).toBe(0);
  }, 60_000);

  describe('refuses to start with one line naming the setting and the cause, exit code 2', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'strongroom-start-'));
    const aFile = join(scratch, 'a-file');
    writeFileSync(aFile, 'not a directory\n');

    it.each([
      ['a database directory that cannot be made', { DATABASE_URL: `sqlite:${aFile}/db.sqlite` }, `DATABASE_URL: cannot open the SQLite database ${aFile}/db.sqlite: ${aFile} is a file, not a folder; set DATABASE_URL (or DATA_DIR) to a place`],
      ['a data directory that cannot be made', { DATA_DIR: `${aFile}/data` }, `DATA_DIR: cannot open the SQLite database ${aFile}/data/strongroom.sqlite`],
      ['an unreachable PostgreSQL, without its password', { DATABASE_URL: 'postgres://strongroom:s3cret@127.0.0.1:1/vault' }, 'DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:1/vault: connection refused'],
      ['a missing certificate', { DATABASE_URL: 'sqlite::memory:', TLS_CERT_FILE: join(scratch, 'none.pem'), TLS_KEY_FILE: aFile }, `TLS_CERT_FILE: cannot read ${join(scratch, 'none.pem')}: no such file or directory`],
      ['a certificate that is not PEM', { DATABASE_URL: 'sqlite::memory:', TLS_CERT_FILE: aFile, TLS_KEY_FILE: aFile }, `TLS_CERT_FILE: cannot serve ${aFile} with ${aFile}: error:0480006C:PEM routines::no start line`],
      ['an address of another machine', { DATABASE_URL: 'sqlite::memory:', HOST: '192.0.2.1', PORT: '0' }, 'HOST: cannot listen on 192.0.2.1: not an address of this machine'],
    ])('%s', async (_title, env, message) => {
      const run = start(env);
      expect(await run.exited).toBe(2);
      const lines = run.output().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Strongroom cannot start: ${message}`);
      expect(run.output()).not.toContain('s3cret');
      expect(run.output()).not.toMatch(/\n\s+at /);
    }, 30_000);

    it('a port in use', async () => {
      blackhole = createServer();
      await new Promise<void>((resolve) => blackhole!.listen(0, '127.0.0.1', resolve));
      const address = blackhole.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const run = start({ DATABASE_URL: 'sqlite::memory:', PORT: String(port) });
      expect(await run.exited).toBe(2);
      expect(run.output().trim()).toBe(`Strongroom cannot start: PORT: 127.0.0.1:${port} is already in use by another program`);
    }, 30_000);

    it('invalid choices, listing the allowed values and services', async () => {
      const run = start({ DEPLOYMENT: 'moon', SERVICES: 'api,billing' });
      expect(await run.exited).toBe(2);
      expect(run.output()).toContain('DEPLOYMENT: must be one of selfhosted, cloud (got "moon")');
      expect(run.output()).toContain('SERVICES: unknown service "billing"; use "all" or a comma list of api, identity, events, notifications');
      expect(run.output()).not.toContain('pattern');
    }, 30_000);
  });

  it('reads a .env file in its working directory, with the environment winning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strongroom-dotenv-'));
    writeFileSync(join(dir, '.env'), `# settings for this test\nDATABASE_URL="sqlite:${dir}/from-dotenv.sqlite"\nLOG_LEVEL=warn\n`);
    const fromFile = start({}, { cwd: dir, args: ['migrate'] });
    expect(await fromFile.exited).toBe(0);
    expect(existsSync(join(dir, 'from-dotenv.sqlite'))).toBe(true);

    const fromEnv = start({ DATABASE_URL: `sqlite:${dir}/from-env.sqlite` }, { cwd: dir, args: ['migrate'] });
    expect(await fromEnv.exited).toBe(0);
    expect(existsSync(join(dir, 'from-env.sqlite'))).toBe(true);
  }, 30_000);

  it('says so when the database already has a newer release\'s migrations, and serves on it with a warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strongroom-ahead-'));
    const env = { DATABASE_URL: `sqlite:${dir}/ahead.sqlite` };
    expect(await start(env, { cwd: dir, args: ['migrate'] }).exited).toBe(0);
    // What a newer release's `migrate` leaves behind: a migration this code does not know.
    const database = new BetterSqlite3(join(dir, 'ahead.sqlite'));
    database.prepare("insert into kysely_migration (name, timestamp) values ('9999-from-the-future', ?)").run(new Date().toISOString());
    database.close();

    const migrate = start(env, { cwd: dir, args: ['migrate'] });
    expect(await migrate.exited).toBe(0);
    expect(migrate.output()).toContain('The database is ahead of this release: it has 1 migration(s) of a newer release (9999-from-the-future)');

    const port = await freePort();
    const server = start({ ...env, PORT: String(port), LOG_LEVEL: 'warn' }, { cwd: dir });
    await waitForServer(`http://127.0.0.1:${port}`);
    await waitFor(() => server.output().includes('the database schema is ahead of this release'));
    expect(server.output()).toContain('9999-from-the-future');
  }, 60_000);
});
