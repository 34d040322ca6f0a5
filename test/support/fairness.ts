/**
 * Fairness under abuse (issue #36): one client must not slow down everybody. The server runs as
 * operators run it (the build, `npm start`'s node flags, Prometheus metrics on) in a process of
 * its own on a fresh database. A victim user, from another loopback address (127.0.0.2, so that
 * per-address limits aimed at the attackers never touch it), syncs and edits an item in two loops
 * while a scenario (fairness-scenarios.ts) attacks from 127.0.0.1. Measured per run:
 *
 * - the victim's latencies (p50, p99, max; a request unanswered after VICTIM_TIMEOUT_MS counts at
 *   that time and as failed);
 * - the server's longest event-loop stall: prom-client's `nodejs_eventloop_lag_max_seconds`, read
 *   from `perf_hooks.monitorEventLoopDelay`, whose histogram prom-client resets at every scrape, so
 *   a scrape before the run and one after it give the longest stall of the run (it includes the
 *   monitor's 10 ms sampling interval: an idle loop reads about 10 ms);
 * - resident memory (VmRSS of /proc) just before the attack and `settleSeconds` idle seconds
 *   after it, and the process's peak (VmHWM). The server runs without `--expose-gc`, so "memory
 *   returns" means what an operator sees: the resident size some seconds after the abuse ended,
 *   whatever V8 and the allocator chose to give back by then;
 * - what was lost or half-written: the victim's edits must hold their last acknowledged values and
 *   its vault its items, and each scenario checks that what it attempted was written whole or not
 *   at all; no answer to an attacker may be a 5xx.
 *
 * The test (test/reliability/fairness.test.ts) asserts a multiple of the targets; the benchmark
 * (bench/fairness.ts) prints the figures beside the targets themselves.
 */
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher } from 'undici';
import { openDatabase, type Db } from '../../src/db/database.js';
import { passwordGrantForm, testAccount } from './accounts.js';
import { encryptText, registerFinishBody, type TestAccount } from './bw-crypto.js';
import { freePort, PROJECT_ROOT, startProgram, waitFor, type Program } from './program.js';
import { cipherBody } from './vault.js';

/** Issue #36's targets. */
export const TARGETS = { victimP99Ms: 100, stallMs: 50, memoryGrowth: 0.2 } as const;

/** A victim request unanswered this long counts as failed, at this latency. */
const VICTIM_TIMEOUT_MS = 5000;
/** How long the harness waits for the scrape after a run, and for the victim's vault read in the checks. */
const ANSWER_TIMEOUT_MS = 5000;
/** Any other request without a signal of its own gives up after this long (a server that no longer answers). */
const REQUEST_TIMEOUT_MS = 15_000;
/** A pause between a victim's requests: a busy client, not a second attacker. */
const VICTIM_PAUSE_MS = 10;
const VICTIM_ITEMS = 20;
/** Items the victim edits in turn. */
const EDITED_ITEMS = 3;
const METRICS_TOKEN = 'fairness-metrics-token-0123456789';
export const ATTACKER_ADDRESS = '127.0.0.1';
const VICTIM_ADDRESS = '127.0.0.2';
const SCRAPER_ADDRESS = '127.0.0.3';

export interface Answer {
  status: number;
  text: string;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  form?: Record<string, string>;
  body?: string | Buffer;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Connections from one loopback address (undici's own `connect.localAddress` is not honoured, so the socket is made here). */
export function agentFrom(address: string): Agent {
  return new Agent({
    connect: (options, callback) => {
      const socket = connect({ host: options.hostname, port: Number(options.port), localAddress: address });
      socket.once('connect', () => callback(null, socket));
      socket.once('error', (error) => callback(error, null));
    },
  });
}

/** One request; throws when it gets no answer (aborted, timed out, connection closed). */
export async function send(agent: Dispatcher, baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await agent.request({ origin: baseUrl, path, method, headers, body: body ?? null, signal: options.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return { status: res.statusCode, text: await res.body.text() };
}

/** Sends, and throws unless the answer is 200. */
async function ok(agent: Dispatcher, baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<string> {
  const res = await send(agent, baseUrl, method, path, options);
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.text;
}

export interface User {
  account: TestAccount;
  userId: string;
  token: string;
}

/** Registers `email` and logs it in with the password grant, from `agent`'s address. */
export async function newUser(agent: Dispatcher, baseUrl: string, email: string): Promise<User> {
  const account = testAccount(email);
  await ok(agent, baseUrl, 'POST', '/identity/accounts/register/finish', { json: registerFinishBody(account) });
  const login = JSON.parse(await ok(agent, baseUrl, 'POST', '/identity/connect/token', { form: passwordGrantForm(account) })) as { access_token: string };
  const payload = JSON.parse(Buffer.from(login.access_token.split('.')[1] ?? '', 'base64url').toString()) as { sub: string };
  return { account, userId: payload.sub, token: login.access_token };
}

/** Creates a personal login item; answers its id. */
export async function newItem(agent: Dispatcher, baseUrl: string, user: User): Promise<string> {
  const text = await ok(agent, baseUrl, 'POST', '/api/ciphers', { token: user.token, json: cipherBody('login', user.account.userKey) });
  return (JSON.parse(text) as { id: string }).id;
}

/** What a scenario's preparation may use. */
export interface Setup {
  baseUrl: string;
  /** Requests from the attackers' address. */
  attacker: Agent;
  /** A fresh account (registered and logged in from the attackers' address). */
  newUser(label: string): Promise<User>;
}

/** One attacker's move: answers what came of it (a status, `closed`, ...), counted per run. */
export type Move = (signal: AbortSignal) => Promise<string>;

export interface Attack {
  /** Each runs again and again, at once with the others, until the run ends. */
  attackers: Move[];
  /** After the run: what was lost or half-written, in words (empty when nothing). */
  verify(db: Db, attacks: Record<string, number>): Promise<string[]>;
}

export interface Scenario {
  name: string;
  /** Made before the clock starts: accounts, items, request bodies. */
  prepare(setup: Setup): Promise<Attack>;
}

export interface Figures {
  scenario: string;
  victim: { requests: number; p50: number; p99: number; max: number; failed: number };
  /** The server's longest event-loop delay during the run, in ms; null when the server did not answer the scrape in time. */
  stallMs: number | null;
  /** The measuring process's own longest loop delay: when high, the victim's latencies above include the client's. */
  clientStallMs: number;
  rss: { beforeMb: number; afterMb: number; peakMb: number };
  /** The attackers' outcomes, counted. */
  attacks: Record<string, number>;
  problems: string[];
}

export interface RunOptions {
  databaseUrl: string;
  /** Where the server keeps its files (attachments, Sends). */
  dataDir: string;
  /** How long the attack runs. */
  seconds: number;
  /** Idle time after the attack before memory is read again. */
  settleSeconds: number;
  /** More of the server's settings (PASSWORD_ITERATIONS, ...). */
  env?: Record<string, string>;
}

/** `npm start`'s node flags (package.json), passed through NODE_OPTIONS, so that memory is measured as operators run the server. */
const START_FLAGS = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));

interface Server {
  program: Program;
  baseUrl: string;
  stop(): Promise<void>;
}

/** The built server (dist/main.js; build it first: scripts/build-if-stale.mjs) on `databaseUrl`, with metrics on. */
async function startServer(options: RunOptions): Promise<Server> {
  const port = await freePort();
  const program = startProgram(
    {
      NODE_OPTIONS: START_FLAGS.join(' '),
      DATABASE_URL: options.databaseUrl,
      DATA_DIR: options.dataDir,
      PORT: String(port),
      PUBLIC_URL: 'http://vault.fairness.test',
      LOG_LEVEL: 'info',
      METRICS_ENABLED: 'true',
      METRICS_TOKEN,
      ...options.env,
    },
    { program: 'build' },
  );
  await waitFor(() => program.stdout().includes('Strongroom is ready') || program.proc.exitCode !== null, 60_000);
  if (program.proc.exitCode !== null) throw new Error(`the server did not start:\n${program.output()}`);
  return {
    program,
    baseUrl: `http://127.0.0.1:${port}`,
    async stop() {
      program.proc.kill('SIGKILL');
      await program.exited;
    },
  };
}

/** A line of /proc/<pid>/status, in MB; NaN once the process is gone. */
function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return Number(match?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** The server's longest event-loop delay since the last scrape, in ms; null without an answer within ANSWER_TIMEOUT_MS. */
async function scrapeStall(scraper: Agent, baseUrl: string): Promise<number | null> {
  const signal = AbortSignal.timeout(ANSWER_TIMEOUT_MS);
  let res: Answer;
  try {
    res = await send(scraper, baseUrl, 'GET', '/metrics', { token: METRICS_TOKEN, signal });
  } catch (error) {
    if (signal.aborted) return null;
    throw error;
  }
  const match = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(res.text);
  if (res.status !== 200 || !match) throw new Error(`GET /metrics: ${res.status} ${res.text.slice(0, 200)}`);
  return Number(match[1]) * 1000;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** The victim: a small vault, a sync loop and an edit loop; `edits` keeps what each edited item must now hold. */
class Victim {
  readonly latencies: number[] = [];
  failed = 0;
  /** Per edited item: the last acknowledged name, and the names sent without an answer (any of them may have landed, even after a later one). */
  readonly edits = new Map<string, { acknowledged: string; unanswered: string[] }>();
  private serial = 0;

  private constructor(
    private readonly agent: Agent,
    private readonly baseUrl: string,
    private readonly user: User,
    readonly items: string[],
  ) {}

  static async create(agent: Agent, baseUrl: string): Promise<Victim> {
    const user = await newUser(agent, baseUrl, 'victim@fairness.test');
    const ciphers = Array.from({ length: VICTIM_ITEMS }, () => cipherBody('login', user.account.userKey));
    await ok(agent, baseUrl, 'POST', '/api/ciphers/import', { token: user.token, json: { folders: [], ciphers, folderRelationships: [] } });
    const items = (JSON.parse(await ok(agent, baseUrl, 'GET', '/api/sync?excludeDomains=true', { token: user.token })) as { ciphers: { id: string }[] }).ciphers.map((c) => c.id);
    const victim = new Victim(agent, baseUrl, user, items);
    for (const id of items.slice(0, EDITED_ITEMS)) victim.edits.set(id, { acknowledged: '', unanswered: [] });
    return victim;
  }

  /** Both loops until `until` settles; each request is timed. */
  async run(until: Promise<void>): Promise<void> {
    let running = true;
    void until.then(() => (running = false));
    const loop = async (step: () => Promise<unknown>) => {
      while (running) {
        await step();
        await sleep(VICTIM_PAUSE_MS);
      }
    };
    await Promise.all([loop(() => this.timed('GET', '/api/sync?excludeDomains=true')), loop(() => this.edit())]);
  }

  private async edit(): Promise<void> {
    const id = this.items[this.serial % EDITED_ITEMS] as string;
    const name = encryptText(`edit ${++this.serial}`, this.user.account.userKey);
    const state = this.edits.get(id)!;
    const answered = await this.timed('PUT', `/api/ciphers/${id}`, cipherBody('login', this.user.account.userKey, { name }));
    if (answered) state.acknowledged = name;
    else state.unanswered.push(name);
  }

  /** Answers whether the request was answered 200. */
  private async timed(method: string, path: string, json?: unknown): Promise<boolean> {
    const started = performance.now();
    try {
      const res = await send(this.agent, this.baseUrl, method, path, { token: this.user.token, json, signal: AbortSignal.timeout(VICTIM_TIMEOUT_MS) });
      this.latencies.push(performance.now() - started);
      if (res.status !== 200) this.failed += 1;
      return res.status === 200;
    } catch {
      this.latencies.push(performance.now() - started);
      this.failed += 1;
      return false;
    }
  }

  /** Every item still there, every edited item holding its last acknowledged name (or a later unanswered one). */
  async verify(): Promise<string[]> {
    let sync: { ciphers: { id: string; name: string }[] };
    try {
      const res = await send(this.agent, this.baseUrl, 'GET', '/api/sync?excludeDomains=true', { token: this.user.token, signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
      if (res.status !== 200) throw new Error(`${res.status} ${res.text.slice(0, 200)}`);
      sync = JSON.parse(res.text) as typeof sync;
    } catch (error) {
      return [`the victim's vault could not be read after the run (${String(error)})`];
    }
    const problems: string[] = [];
    const byId = new Map(sync.ciphers.map((c) => [c.id, c.name]));
    const missing = this.items.filter((id) => !byId.has(id));
    if (missing.length > 0) problems.push(`the victim lost ${missing.length} of its ${this.items.length} items`);
    for (const [id, { acknowledged, unanswered }] of this.edits) {
      const name = byId.get(id);
      if (acknowledged && name !== acknowledged && !unanswered.includes(name ?? '')) problems.push(`the victim's item ${id} lost its last acknowledged edit`);
    }
    return problems;
  }
}

/** Runs attacker `move` again and again until `signal` aborts, counting its outcomes. */
async function attackLoop(move: Move, signal: AbortSignal, outcomes: Record<string, number>): Promise<void> {
  while (!signal.aborted) {
    let outcome: string;
    try {
      outcome = await move(signal);
    } catch {
      outcome = 'no answer';
      // A refused or reset connection: try again shortly, not in a tight loop.
      if (!signal.aborted) await sleep(20);
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
}

/**
 * One scenario on a fresh server: the victim warms up, the attack and the victim's loops run for
 * `seconds`, the stall is scraped, memory read after `settleSeconds`, then the checks. The server
 * is killed at the end whatever it was doing.
 */
export async function runScenario(scenario: Scenario, options: RunOptions): Promise<Figures> {
  const server = await startServer(options);
  const pid = server.program.proc.pid as number;
  const attacker = agentFrom(ATTACKER_ADDRESS);
  const victimAgent = agentFrom(VICTIM_ADDRESS);
  const scraper = agentFrom(SCRAPER_ADDRESS);
  const clientLoop = monitorEventLoopDelay();
  let users = 0;
  try {
    const { baseUrl } = server;
    const victim = await Victim.create(victimAgent, baseUrl);
    const attack = await scenario.prepare({ baseUrl, attacker, newUser: (label) => newUser(attacker, baseUrl, `${label}-${++users}@fairness.test`) });
    // Warm-up: the victim's routes compiled and cached before anything is measured.
    await victim.run(sleep(500));
    victim.latencies.length = 0;
    victim.failed = 0;

    const beforeMb = statusMb(pid, 'VmRSS');
    await scrapeStall(scraper, baseUrl);
    clientLoop.enable();
    const stop = new AbortController();
    // Every attacker's request in flight listens to it.
    setMaxListeners(0, stop.signal);
    const attacks: Record<string, number> = {};
    const attacking = Promise.all(attack.attackers.map((move) => attackLoop(move, stop.signal, attacks)));
    await victim.run(sleep(options.seconds * 1000));
    stop.abort();
    await attacking;
    clientLoop.disable();
    const stallMs = await scrapeStall(scraper, baseUrl);
    await sleep(options.settleSeconds * 1000);
    const afterMb = statusMb(pid, 'VmRSS');

    const problems = await victim.verify();
    if (server.program.proc.exitCode !== null || server.program.proc.signalCode !== null) {
      problems.push(`the server's process ended during the run:\n${server.program.stderr().slice(-2000)}`);
    }
    const database = openDatabase(options.databaseUrl, { poolSize: 1 });
    try {
      problems.push(...(await attack.verify(database.db, attacks)));
    } catch (error) {
      problems.push(`the scenario's checks could not run (${String(error)})`);
    } finally {
      await database.close();
    }
    const fivexx = Object.entries(attacks).filter(([outcome]) => /(^| )5\d\d$/.test(outcome));
    for (const [status, count] of fivexx) problems.push(`${count} attack request(s) answered ${status}`);
    const sorted = [...victim.latencies].sort((a, b) => a - b);
    return {
      scenario: scenario.name,
      victim: { requests: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, failed: victim.failed },
      stallMs,
      clientStallMs: clientLoop.max / 1e6,
      rss: { beforeMb, afterMb, peakMb: statusMb(pid, 'VmHWM') },
      attacks,
      problems,
    };
  } finally {
    await server.stop();
    await Promise.all([attacker.destroy(), victimAgent.destroy(), scraper.destroy()]);
  }
}

export interface Check {
  what: string;
  figure: string;
  limit: string;
  met: boolean;
}

/** How many times each target a check allows (1: the targets themselves). */
export interface Multiples {
  victimP99: number;
  stall: number;
  memoryGrowth: number;
}

/** The figures against the targets, each `multiples` times as loose. */
export function checks(f: Figures, multiples: Multiples = { victimP99: 1, stall: 1, memoryGrowth: 1 }): Check[] {
  const p99Limit = TARGETS.victimP99Ms * multiples.victimP99;
  const stallLimit = TARGETS.stallMs * multiples.stall;
  const growthLimit = TARGETS.memoryGrowth * multiples.memoryGrowth;
  const growth = f.rss.afterMb / f.rss.beforeMb - 1;
  return [
    { what: "the victim's p99", figure: `${f.victim.p99.toFixed(0)} ms`, limit: `< ${p99Limit} ms`, met: f.victim.p99 < p99Limit },
    { what: "the victim's failed requests", figure: String(f.victim.failed), limit: '0', met: f.victim.failed === 0 },
    { what: 'the longest event-loop stall', figure: f.stallMs === null ? `no answer in ${ANSWER_TIMEOUT_MS / 1000} s` : `${f.stallMs.toFixed(0)} ms`, limit: `< ${stallLimit} ms`, met: f.stallMs !== null && f.stallMs < stallLimit },
    { what: 'resident memory after the run', figure: `${f.rss.afterMb.toFixed(0)} MB (${(growth * 100).toFixed(0)} % over ${f.rss.beforeMb.toFixed(0)} MB)`, limit: `≤ +${(growthLimit * 100).toFixed(0)} %`, met: growth <= growthLimit },
    { what: 'nothing lost or half-written', figure: f.problems.length === 0 ? 'nothing' : f.problems.join('; '), limit: 'nothing', met: f.problems.length === 0 },
  ];
}

/** One line of figures, for the test's output and the benchmark's log. */
export function describeFigures(f: Figures): string {
  const v = f.victim;
  const attacks = Object.entries(f.attacks)
    .map(([outcome, count]) => `${outcome}: ${count}`)
    .join(', ');
  return `${f.scenario}: victim ${v.requests} requests, p50 ${v.p50.toFixed(1)} ms, p99 ${v.p99.toFixed(1)} ms, max ${v.max.toFixed(0)} ms, failed ${v.failed}; stall ${f.stallMs === null ? 'no answer' : `${f.stallMs.toFixed(0)} ms`} (client ${f.clientStallMs.toFixed(0)} ms); RSS ${f.rss.beforeMb.toFixed(0)} → ${f.rss.afterMb.toFixed(0)} MB (peak ${f.rss.peakMb.toFixed(0)}); attacks ${attacks}${f.problems.length > 0 ? `; problems: ${f.problems.join('; ')}` : ''}`;
}
