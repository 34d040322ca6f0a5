/**
 * A Strongroom fleet on one machine: N instances (the built server, `node dist/main.js`) on one
 * PostgreSQL database, one Redis and one RabbitMQ, behind nginx (round-robin, no sticky sessions,
 * WebSocket upgrade), TLS terminated at nginx as docs/operations.md describes. Used by
 * test/fleet/fleet.fleet.ts and `npx tsx fleet/run.ts`.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));
const TEMPLATE = join(PROJECT_ROOT, 'fleet', 'nginx.conf.template');

export interface FleetOptions {
  /** PostgreSQL server (a fresh schema is made in it for the fleet). */
  databaseUrl: string;
  redisUrl: string;
  /** RabbitMQ for event forwarding; without it events are forwarded in process (the capacity bench runs none). */
  amqpUrl?: string;
  /** Where nginx's files, the logs and the TLS files live. */
  dir: string;
  tls: { certPath: string; keyPath: string };
  instances: number;
  /** Extra settings for every instance. */
  env?: Record<string, string>;
  /**
   * A fresh schema for the fleet in `databaseUrl` (the default), or false: `databaseUrl` as
   * given, e.g. a schema a benchmark seeded already (close() then leaves it alone).
   */
  freshSchema?: boolean;
  /** CPUs each instance is pinned to (`taskset -c`), by index, e.g. ['0', '1']; unpinned when absent. */
  cpus?: string[];
}

export interface Instance {
  index: number;
  port: number;
  url: string;
  proc: ChildProcess | null;
  output: string;
}

export interface Fleet {
  /** https://127.0.0.1:<port>, nginx. */
  url: string;
  databaseUrl: string;
  instances: Instance[];
  /** Points nginx at these instances (by index) and reloads it; in-flight requests finish. */
  route(indexes: number[]): Promise<void>;
  /**
   * The rolling-restart step of docs/operations.md: out of nginx's rotation, SIGTERM, wait for the
   * exit (the drain), start again, wait until it serves, back into the rotation.
   */
  restart(index: number): Promise<void>;
  kill(index: number, signal?: NodeJS.Signals): Promise<void>;
  /** Settings for instances started from now on (a rolling restart applies them). */
  setEnv(extra: Record<string, string>): void;
  start(index: number): Promise<void>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

/** Builds dist/ when src/ changed: the fleet runs the server as production does. */
export function buildServer(): void {
  execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts/build-if-stale.mjs')], { stdio: 'inherit', cwd: PROJECT_ROOT });
}

async function freshSchema(url: string): Promise<string> {
  const schema = `fleet_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const scoped = new URL(url);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  return scoped.toString();
}

export async function dropFleetSchema(url: string): Promise<void> {
  const schema = /search_path%3D(fleet_[0-9a-f]+)|search_path=(fleet_[0-9a-f]+)/.exec(url);
  const name = schema?.[1] ?? schema?.[2];
  if (!name) return;
  const base = new URL(url);
  base.searchParams.delete('options');
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`drop schema if exists ${name} cascade`);
  await admin.end();
}

/** The nginx configuration of the fleet: the template with its ports and paths filled in. */
export function nginxConfig(values: { prefix: string; listen: number; cert: string; key: string; upstreams: number[] }): string {
  const servers = values.upstreams.map((port) => `    server 127.0.0.1:${port} max_fails=1 fail_timeout=2s;`).join('\n');
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  return readFileSync(TEMPLATE, 'utf8')
    .replaceAll('{{user}}', user)
    .replaceAll('{{prefix}}', values.prefix)
    .replaceAll('{{listen}}', String(values.listen))
    .replaceAll('{{cert}}', values.cert)
    .replaceAll('{{key}}', values.key)
    .replaceAll('{{servers}}', servers);
}

async function waitUntil(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function answers(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
  return res.status === 200;
}

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const databaseUrl = options.freshSchema === false ? options.databaseUrl : await freshSchema(options.databaseUrl);
  const lbPort = await freePort();
  const url = `https://127.0.0.1:${lbPort}`;
  const prefix = join(options.dir, 'nginx');
  mkdirSync(prefix, { recursive: true });
  const amqpPrefix = `fleet-${randomBytes(4).toString('hex')}`;
  const instances: Instance[] = [];
  for (let index = 0; index < options.instances; index++) {
    const port = await freePort();
    instances.push({ index, port, url: `http://127.0.0.1:${port}`, proc: null, output: '' });
  }
  let extraEnv: Record<string, string> = {};
  const secretsKey = randomBytes(32).toString('base64');
  const env = (instance: Instance): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    PORT: String(instance.port),
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '10',
    REDIS_URL: options.redisUrl,
    ...(options.amqpUrl ? { AMQP_URL: options.amqpUrl, AMQP_PREFIX: amqpPrefix } : {}),
    PUBLIC_URL: url,
    TRUST_PROXY: 'true',
    HEALTH_ENABLED: 'true',
    METRICS_ENABLED: 'true',
    METRICS_ALLOWED_ADDRESSES: '127.0.0.1',
    PASSWORD_ITERATIONS: '100000',
    INTEGRATIONS_ALLOW_PRIVATE_ADDRESSES: 'true',
    // One key for the fleet, as docs/operations.md asks: it opens what single sign-on sealed.
    SECRETS_KEY: secretsKey,
    SHUTDOWN_TIMEOUT_SECONDS: '10',
    LOG_LEVEL: 'warn',
    DATA_DIR: join(options.dir, `instance-${instance.index}`),
    ...options.env,
    ...extraEnv,
  });

  async function start(index: number): Promise<void> {
    const instance = instances[index];
    if (!instance) throw new Error(`no instance ${index}`);
    const cpus = options.cpus?.[index];
    const command = cpus ? ['taskset', '-c', cpus, process.execPath] : [process.execPath];
    const proc = spawn(command[0]!, [...command.slice(1), join(PROJECT_ROOT, 'dist/main.js')], { cwd: options.dir, env: env(instance), stdio: ['ignore', 'pipe', 'pipe'] });
    instance.proc = proc;
    proc.stdout?.on('data', (d: Buffer) => (instance.output += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (instance.output += d.toString()));
    await waitUntil(() => answers(`${instance.url}/api/alive`), 60_000, `instance ${index} to serve (${instance.output.slice(-500)})`);
  }

  async function kill(index: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const proc = instances[index]?.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill(signal);
    await exited;
    const instance = instances[index];
    if (instance) instance.proc = null;
  }

  const nginxConf = join(prefix, 'nginx.conf');
  /** The instances nginx sends requests to. */
  let routed = instances.map((i) => i.index);
  const writeConf = (indexes: number[]) =>
    writeFileSync(
      nginxConf,
      nginxConfig({ prefix, listen: lbPort, cert: options.tls.certPath, key: options.tls.keyPath, upstreams: indexes.map((i) => instances[i]?.port ?? 0) }),
    );

  // The first instance migrates; the others start together once the schema is there.
  await start(0);
  await Promise.all(instances.slice(1).map((instance) => start(instance.index)));
  writeConf(instances.map((i) => i.index));
  const nginx = spawn('nginx', ['-p', prefix, '-c', nginxConf, '-e', join(prefix, 'error.log'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let nginxOutput = '';
  nginx.stderr?.on('data', (d: Buffer) => (nginxOutput += d.toString()));
  await waitUntil(async () => (await fetch(`http://127.0.0.1:${lbPort}/`).catch(() => null)) !== null || nginxOutput.includes('emerg'), 10_000, 'nginx');
  if (nginxOutput.includes('emerg')) throw new Error(`nginx did not start: ${nginxOutput}`);

  async function route(indexes: number[]): Promise<void> {
    routed = [...indexes];
    writeConf(indexes);
    const pid = readFileSync(join(prefix, 'nginx.pid'), 'utf8').trim();
    process.kill(Number(pid), 'SIGHUP');
    // The new workers take over within a moment; the old ones finish what they hold.
    await new Promise((r) => setTimeout(r, 1000));
  }

  return {
    url,
    databaseUrl,
    instances,
    route,
    async restart(index) {
      // Taken out of the rotation first: a stopping instance closes its listening socket, which
      // resets connections the kernel accepted for it and the process had not yet read, and
      // nginx cannot resend a POST already written to one (it answered 502).
      const before = routed;
      const others = before.filter((i) => i !== index);
      if (others.length > 0 && others.length < before.length) await route(others);
      await kill(index, 'SIGTERM');
      await start(index);
      if (routed !== before) await route(before);
    },
    kill,
    start,
    setEnv(extra) {
      extraEnv = { ...extraEnv, ...extra };
    },
    async close() {
      nginx.kill('SIGQUIT');
      await Promise.all(instances.map((instance) => kill(instance.index, 'SIGTERM')));
      if (options.freshSchema !== false) await dropFleetSchema(databaseUrl).catch(() => undefined);
    },
  };
}
