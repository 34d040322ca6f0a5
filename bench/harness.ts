/**
 * What the benchmarks share: the server in its own process, the bare-http ceiling, calls
 * through the real routes, a fresh database per engine, autocannon runs and the results table.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { passwordGrantForm } from '../test/support/accounts.js';
import { createSchema, dropSchema } from '../test/support/pg-schema.js';
import {
  encryptText,
  encryptToEncString,
  generateRsaKeyPair,
  generateSymmetricKey,
  makeTestAccount,
  registerFinishBody,
  rsaEncryptToEncString,
  type SymmetricKey,
  type TestAccount,
} from '../test/support/bw-crypto.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PG_URL = process.env.BENCH_POSTGRES_URL;
export const ENGINES = (process.env.BENCH_ENGINES ?? (PG_URL ? 'sqlite,postgres' : 'sqlite')).split(',');
export const CLIENT_HEADERS = { 'bitwarden-client-version': '2026.9.0', 'device-type': '25' };

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) {
        child.stdout?.off('data', onData);
        resolve(match[1] ?? match[0]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.on('exit', (code) => reject(new Error(`process exited with ${code}: ${seen}`)));
  });
}

export interface Running {
  url: string;
  /** The server's process id (for reading its CPU time). */
  pid?: number;
  stop(): Promise<void>;
}

/**
 * `src/main.ts` (or `script`) in its own process on a free port; `nodeOptions` go before the script
 * (e.g. `--cpu-prof`). The IP rules are off unless `env` turns them on: every benchmark client
 * is one address, which the cloud variant's defaults would soon refuse.
 */
export async function startServer(databaseUrl: string, env: Record<string, string> = {}, nodeOptions: string[] = [], script = 'src/main.ts', root = ROOT): Promise<Running> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeOptions, '--import', 'tsx', script], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      LOG_LEVEL: 'info',
      PASSWORD_ITERATIONS: '100000',
      PUBLIC_URL: 'http://vault.bench.test',
      IP_RATE_LIMITING: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForLine(child, /Strongroom is ready/);
  return { url: `http://127.0.0.1:${port}`, ...(child.pid ? { pid: child.pid } : {}), stop: () => stop(child) };
}

/**
 * `startServer` speaking HTTPS with the test certificate authority's leaf for 127.0.0.1 (as an
 * operator with TLS_CERT_FILE would run it); `ca` is the authority's PEM for the client to trust.
 */
export async function startHttpsServer(databaseUrl: string, env: Record<string, string> = {}, nodeOptions: string[] = []): Promise<Running & { ca: string }> {
  const { createTestTls } = await import('../test/support/tls.js');
  const tls = await createTestTls();
  const running = await startServer(databaseUrl, { TLS_CERT_FILE: tls.certPath, TLS_KEY_FILE: tls.keyPath, ...env }, nodeOptions);
  return { ...running, url: running.url.replace('http://', 'https://'), ca: tls.caPem };
}

/** `bench/ceiling-server.ts` answering every request with the bytes of `file` (or another ceiling `script` given `file`). */
export async function startCeiling(file: string, script = 'bench/ceiling-server.ts'): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await waitForLine(child, /^(\d+)\n/m);
  return { url: `http://127.0.0.1:${port}`, ...(child.pid ? { pid: child.pid } : {}), stop: () => stop(child) };
}

/** CPU time a process has spent, in ms (/proc/<pid>/stat: utime and stime, in ticks of 10 ms); 0 without a pid or once it is gone. */
export function cpuMsOf(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Resident memory of a process in MB (VmRSS of /proc/<pid>/status); NaN without a pid or once it is gone. */
export function residentMbOf(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** Writes `body` to a temporary file and starts a ceiling server sending it (`script`, as in startCeiling). */
export function ceilingFor(name: string, body: string, script?: string): Promise<Running> {
  const file = join(tmpdir(), `sr-bench-${name}.json`);
  writeFileSync(file, body);
  return startCeiling(file, script);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** One request through the real routes; answers the body text, throws on a non-2xx status. */
export async function call(base: string, method: string, path: string, init: { token?: string; json?: unknown; form?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...CLIENT_HEADERS };
  let body: string | undefined;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(base + path, { method, headers, ...(body ? { body } : {}) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

/** Registers an account and logs it in with the password grant, as the clients do; answers its access token. */
export async function registerAndLogin(base: string, email: string): Promise<{ token: string; account: TestAccount }> {
  const account = makeTestAccount({ email });
  await call(base, 'POST', '/identity/accounts/register/finish', { json: registerFinishBody(account) });
  const login = JSON.parse(
    await call(base, 'POST', '/identity/connect/token', {
      form: passwordGrantForm(account, { deviceType: '25', deviceIdentifier: 'b0b0b0b0-0000-4000-8000-000000000001', deviceName: 'bench' }),
    }),
  ) as { access_token: string };
  return { token: login.access_token, account };
}

/**
 * An owner registers and founds an Enterprise organization (plan 20) through
 * `POST /api/organizations`, as the web app does on a cloud deployment, with its default
 * collection and, when asked, Secrets Manager.
 */
export async function foundOrganization(
  base: string,
  email: string,
  opts: { secretsManager?: boolean } = {},
): Promise<{ orgId: string; token: string; account: TestAccount; orgKey: SymmetricKey }> {
  const { token, account } = await registerAndLogin(base, email);
  const orgKey = generateSymmetricKey();
  const pair = generateRsaKeyPair();
  const org = JSON.parse(
    await call(base, 'POST', '/api/organizations', {
      token,
      json: {
        name: 'Bench',
        billingEmail: 'billing@bench.test',
        planType: 20,
        ...(opts.secretsManager ? { useSecretsManager: true } : {}),
        key: rsaEncryptToEncString(orgKey.raw, account.publicKeyB64),
        keys: { publicKey: pair.publicKeyB64, encryptedPrivateKey: encryptToEncString(pair.privateKeyDer, orgKey) },
        collectionName: encryptText('Default collection', orgKey),
      },
    }),
  ) as { id: string };
  return { orgId: org.id, token, account, orgKey };
}

export interface Figures {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  rps: number;
  bytes: number;
  errors: number;
}

export async function measure(options: autocannon.Options): Promise<Figures> {
  const result = await autocannon({ duration: SECONDS, ...options });
  return {
    mean: result.latency.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    rps: result.requests.average,
    bytes: result.requests.total ? Math.round(result.throughput.total / result.requests.total) : 0,
    errors: result.errors + result.non2xx,
  };
}

/** A fresh SQLite file, or a fresh schema of BENCH_POSTGRES_URL; `drop` removes it. */
export async function databaseFor(engine: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sr-bench-'));
    return { url: `sqlite:${join(dir, 'bench.sqlite')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (!PG_URL) throw new Error('BENCH_POSTGRES_URL is not set');
  const schema = `bench_${Date.now()}`;
  return {
    url: await createSchema(PG_URL, schema),
    drop: () => dropSchema(PG_URL, schema),
  };
}

/**
 * One line of the summary table `npm run bench` writes (bench/run-all.ts): a headline figure of
 * a benchmark, with the bare ceiling measured beside it in the same run when there is one.
 */
export interface SummaryRow {
  what: string;
  /** Strongroom's figure, in `unit`. */
  strongroom: number;
  /** The bare ceiling's figure in the same run, when there is one. */
  ceiling?: number;
  unit: string;
  /** Whether a lower figure is better (latency, memory, time) or a higher one (throughput). */
  better: 'lower' | 'higher';
  /** The target in words, when the issue sets one. */
  target?: string;
  /** Whether the figure meets the target. */
  met?: boolean;
}

/**
 * Hands a summary row to the runner: appended as one JSON line to BENCH_SUMMARY_FILE when it is
 * set (bench/run-all.ts sets it), nothing otherwise. `bench` is the script's name, e.g. `vault`.
 */
export function summary(bench: string, row: SummaryRow): void {
  const file = process.env.BENCH_SUMMARY_FILE;
  if (file) appendFileSync(file, `${JSON.stringify({ bench, ...row })}\n`);
}

/** The name of the running bench script (`vault` for bench/vault.ts). */
const scriptName = (process.argv[1] ?? '').replace(/^.*\//, '').replace(/\.[mc]?[jt]s$/, '');

/**
 * The rows of the markdown results table and the Strongroom / ceiling ratios, printed at the end.
 * Each ratio is also a summary row (mean latency or throughput against the ceiling's), and each row that is
 * not in a ratio one of its own (requests per second).
 */
export class Results {
  private readonly rows: string[] = [];
  private readonly ratios: string[] = [];
  private readonly standalone = new Map<Figures, string>();

  row(engine: string, what: string, connections: number, f: Figures): void {
    this.rows.push(
      `| ${engine} | ${what} | ${connections} | ${f.mean.toFixed(1)} | ${f.p50} | ${f.p90} | ${f.p99} | ${f.max} | ${f.rps.toFixed(1)} | ${f.bytes.toLocaleString('en-US')} | ${f.errors} |`,
    );
    this.standalone.set(f, `${engine}, ${what}, ${connections} connection(s)`);
  }

  /**
   * `summaryBy: 'throughput'` gives the summary row in requests per second, for answers of well
   * under a millisecond (autocannon's latencies are whole milliseconds, so their mean says little);
   * `withinCeiling` is the target: at most this many times the ceiling's cost.
   */
  ratio(label: string, ours: Figures, bare: Figures, options: { summaryBy?: 'mean latency' | 'throughput'; withinCeiling?: number } = {}): void {
    this.ratios.push(
      `${label}: mean ${(ours.mean / bare.mean).toFixed(2)}x, p50 ${(ours.p50 / Math.max(bare.p50, 1)).toFixed(2)}x, p99 ${(ours.p99 / bare.p99).toFixed(2)}x, throughput ${(bare.rps / ours.rps).toFixed(2)}x`,
    );
    this.standalone.delete(ours);
    this.standalone.delete(bare);
    const byThroughput = options.summaryBy === 'throughput';
    const times = byThroughput ? bare.rps / ours.rps : ours.mean / bare.mean;
    summary(scriptName, {
      what: `${label}, ${byThroughput ? 'throughput' : 'mean latency'}`,
      ...(byThroughput ? { strongroom: ours.rps, ceiling: bare.rps, unit: 'req/s', better: 'higher' as const } : { strongroom: ours.mean, ceiling: bare.mean, unit: 'ms', better: 'lower' as const }),
      ...(options.withinCeiling === undefined ? {} : { target: `≤ ${options.withinCeiling}x the ceiling`, met: times <= options.withinCeiling }),
    });
  }

  print(heading: string, ratioHeading: string): void {
    for (const [f, what] of this.standalone) summary(scriptName, { what, strongroom: f.rps, unit: 'req/s', better: 'higher' });
    console.log(`${heading}, ${SECONDS} s per run, Node ${process.version}\n`);
    console.log('| engine | what | connections | mean ms | p50 ms | p90 ms | p99 ms | max ms | req/s | bytes/response | errors |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const line of this.rows) console.log(line);
    console.log(`\n${ratioHeading}`);
    for (const line of this.ratios) console.log(`- ${line}`);
  }
}
