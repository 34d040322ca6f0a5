/**
 * Bitwarden's own load budgets replayed against Strongroom (#43): each k6 script of
 * `perf/load/` at the pinned commit (bench/capacity/budget-scripts.ts), played over HTTPS with
 * its own arrival rates and checked against its own p95 threshold and its under-1 % failure
 * rule; then the headroom: the largest multiple k of the script's peak rate Strongroom holds
 * under the same rule, found by doubling k in short constant-rate steps and bisecting. Both
 * engines in one run; the generator shares the machine's cores with the server, so its own CPU
 * is reported beside the server's.
 *
 *   npm run bench -- budgets            # the ramps 10x shorter, 12 s headroom steps
 *   BENCH_COMPRESS=1 npm run bench -- budgets   # the ramps exactly as long as the scripts' 10 minutes
 */
import { pbkdf2Sync } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Agent, setGlobalDispatcher } from 'undici';
import { play, Recorder, type Arrivals } from './capacity/arrivals.js';
import { BUDGET_COMMIT, iteration, lengthOf, loginFormFor, peakPerSecond, scenarioRates, SCRIPTS, type BudgetContext, type BudgetScript } from './capacity/budget-scripts.js';
import { createClient, Shed } from './capacity/client.js';
import { call, cpuMsOf, databaseFor, ENGINES, foundOrganization, registerAndLogin, startHttpsServer, summary } from './harness.js';
import { itemBody } from './items.js';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 300);
/** How many times shorter each ramp stage is than the script's (1: exactly the script). */
const COMPRESS = Number(process.env.BENCH_COMPRESS ?? 10);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 12);
const MAX_K = Number(process.env.BENCH_MAX_K ?? 128);
const BISECTIONS = Number(process.env.BENCH_BISECTIONS ?? 2);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 1);
/** Only these scripts (e.g. `sync.js,login.js`); all of them unless set. */
const ONLY = process.env.BENCH_SCRIPTS?.split(',');
/** The server's own default; the harness's 100,000 is for benchmarks that only need logins to be quick. */
const ITERATIONS = '600000';
/**
 * The cloud variant, as the official budgets are run against. MAX_CONNECTIONS_PER_IP off: every
 * generated client shares one address, and the default 100 would close the pool's connections
 * past it (behind a proxy with TRUST_PROXY it is not applied either).
 */
const SERVER_ENV = { DEPLOYMENT: 'cloud', PASSWORD_ITERATIONS: ITERATIONS, MAX_CONNECTIONS_PER_IP: '0' };

/**
 * PBKDF2-SHA256 iterations costing this machine as much CPU as the official server's hash:
 * ASP.NET Core Identity's PasswordHasher V3 (.NET 7 and later: PBKDF2 with HMAC-SHA512, 100,000
 * iterations), which bitwarden/server sets explicitly (docs/capacity.md cites both).
 */
function officialEquivalentIterations(): { iterations: number; sha512Ms: number; sha256Ms: number } {
  const time = (digest: string, rounds: number) => {
    const start = performance.now();
    pbkdf2Sync('master password hash', 'salt of sixteen!', rounds, 32, digest);
    return performance.now() - start;
  };
  // Interleaved and the fastest of each kept, so another process's burst skews neither alone.
  let sha512Ms = Infinity;
  let sha256Ms = Infinity;
  for (let i = 0; i < 5; i++) {
    sha512Ms = Math.min(sha512Ms, time('sha512', 100_000));
    sha256Ms = Math.min(sha256Ms, time('sha256', 600_000));
  }
  return { iterations: Math.round((600 * sha512Ms) / sha256Ms) * 1000, sha512Ms, sha256Ms };
}

interface Step {
  /** Multiple of the script's peak rate (0 for the replay). */
  k: number;
  perSecond: number;
  iterations: number;
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  failed: number;
  shed: number;
  failRate: number;
  held: boolean;
  worstLag: number;
  serverCpuPerRequest: number;
  generatorCpuPerRequest: number;
  generatorCpuShare: number;
  problems: string[];
}

/** Plays `arrivals` (all of one script) and judges it by the script's rule. */
async function judge(script: BudgetScript, label: string, ctx: BudgetContext, rates: ((t: number) => number)[], seconds: number, pid: number | undefined, k: number): Promise<Step> {
  const requests = new Recorder();
  const run = iteration(script.name, ctx, requests);
  let started = 0;
  const arrivals: Arrivals[] = rates.map((rate) => ({
    name: script.name,
    rate,
    spacing: 'even',
    run: async () => {
      started++;
      try {
        await run();
      } catch (error) {
        // Already counted per request; a shed login is an answer, not a failure of the generator.
        if (error instanceof Shed) return { shed: true };
        throw error;
      }
    },
  }));
  const server0 = cpuMsOf(pid);
  const generator0 = process.cpuUsage();
  const wall0 = performance.now();
  const result = await play(arrivals, seconds);
  const wall = performance.now() - wall0;
  const generatorUsage = process.cpuUsage(generator0);
  const serverMs = cpuMsOf(pid) - server0;
  const generatorMs = (generatorUsage.user + generatorUsage.system) / 1000;
  const iterations = result.recorder.figures().reduce((sum, f) => sum + f.count, 0);
  const notSent = iterations - started;
  const f = requests.figures()[0];
  const answered = f?.count ?? 0;
  // An arrival never sent counts as all the requests its iteration would have made.
  const unsent = notSent * script.requestsPerIteration;
  const failed = (f?.errors ?? 0) + (f?.shed ?? 0) + unsent;
  const total = answered + unsent;
  const failRate = total ? failed / total : 0;
  const p95 = f?.p95 ?? NaN;
  // The generator's own problems are the same failed requests again, but for arrivals it never sent.
  const problems = [...requests.problems.entries(), ...[...result.recorder.problems.entries()].filter(([key]) => key.includes('not sent'))].map(([key, n]) => `${n} × ${key}`);
  const step: Step = {
    k,
    perSecond: (k || 1) * peakPerSecond(script),
    iterations,
    requests: total,
    p50: f?.p50 ?? NaN,
    p95,
    p99: f?.p99 ?? NaN,
    failed,
    shed: f?.shed ?? 0,
    failRate,
    held: total > 0 && p95 < script.thresholdMs && failRate < 0.01,
    worstLag: result.worstLag,
    serverCpuPerRequest: answered ? serverMs / answered : NaN,
    generatorCpuPerRequest: answered ? generatorMs / answered : NaN,
    generatorCpuShare: generatorMs / wall,
    problems: problems.slice(0, 3),
  };
  console.error(
    `  ${label} ${k ? `k=${k} (${step.perSecond.toFixed(1)}/s)` : 'replay'}: ${total} requests, p95 ${p95.toFixed(1)} ms, failed ${(failRate * 100).toFixed(2)} % (shed ${step.shed}), ` +
      `server ${step.serverCpuPerRequest.toFixed(2)} ms CPU/request, generator ${step.generatorCpuPerRequest.toFixed(2)} ms/request, lag ${step.worstLag.toFixed(0)} ms ${step.held ? 'held' : 'NOT held'}${problems[0] ? ` (${problems[0]})` : ''}`,
  );
  await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
  return step;
}

/** The replay at the script's rates, then the headroom search. */
async function budget(script: BudgetScript, label: string, ctx: BudgetContext, pid: number | undefined): Promise<{ replay: Step; steps: Step[]; best: Step | undefined; firstFailed: Step | undefined }> {
  const { constant, ramping } = scenarioRates(script, COMPRESS);
  const replay = await judge(script, label, ctx, [constant, ramping], lengthOf(script) / COMPRESS, pid, 0);
  const steps: Step[] = [];
  const at = async (k: number) => {
    const step = await judge(script, label, ctx, [() => k * peakPerSecond(script)], STEP_SECONDS, pid, k);
    steps.push(step);
    return step;
  };
  let best: Step | undefined;
  let firstFailed: Step | undefined;
  for (let k = 1; k <= MAX_K; k *= 2) {
    const step = await at(k);
    if (!step.held) {
      firstFailed = step;
      break;
    }
    best = step;
  }
  let low = best?.k ?? 0;
  let high = firstFailed?.k;
  for (let i = 0; i < BISECTIONS && high !== undefined; i++) {
    const mid = Math.round(((low + high) / 2) * 100) / 100;
    if (mid <= low || mid >= high) break;
    const step = await at(mid);
    if (step.held) {
      best = step;
      low = mid;
    } else {
      firstFailed = step;
      high = mid;
    }
  }
  return { replay, steps, best, firstFailed };
}

/** The synced account's vault: ITEMS items, 60 % its own and 40 % in the organization's collection (docs/capacity.md). */
async function seedVault(base: string, token: string, orgId: string, account: Parameters<typeof itemBody>[0]): Promise<void> {
  const own = Math.round(ITEMS * 0.6);
  await call(base, 'POST', '/api/ciphers/import', { token, json: { folders: [], ciphers: Array.from({ length: own }, (_, i) => itemBody(account, i)), folderRelationships: [] } });
  const collections = JSON.parse(await call(base, 'GET', '/api/collections', { token })) as { data: { id: string }[] };
  const collectionIds = [collections.data[0]?.id];
  for (let start = own; start < ITEMS; start += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, ITEMS - start) }, (_, i) =>
        call(base, 'POST', '/api/ciphers/create', { token, json: { cipher: { ...itemBody(account, start + i), organizationId: orgId }, collectionIds } }),
      ),
    );
  }
}

interface Outcome {
  engine: string;
  label: string;
  script: BudgetScript;
  replay: Step;
  steps: Step[];
  best: Step | undefined;
  firstFailed: Step | undefined;
  /** Only the replay was run (no headroom search). */
  replayOnly?: boolean;
}

/** The public API's default per-organization limit (docs/rate-limits.md), and the setting that lifts it. */
const NO_PUBLIC_API_LIMIT = { PUBLIC_API_RATE_LIMIT: '0' };

async function runEngine(engine: string, officialIterations: number): Promise<Outcome[]> {
  const database = await databaseFor(engine);
  // An account whose stored hash costs what the official server's does; verification follows the stored count.
  const registrar = await startHttpsServer(database.url, { ...SERVER_ENV, PASSWORD_ITERATIONS: String(officialIterations) });
  setGlobalDispatcher(new Agent({ connect: { ca: registrar.ca } }));
  const official = await registerAndLogin(registrar.url, 'login-official@bench.test');
  await registrar.stop();

  // The capacity runs lift the public API's per-organization limit (100 a minute by default):
  // groups.js's own rates are above it, so with it the headroom would measure the policy.
  let server = await startHttpsServer(database.url, { ...SERVER_ENV, ...NO_PUBLIC_API_LIMIT });
  setGlobalDispatcher(new Agent({ connect: { ca: server.ca } }));
  let client = createClient(server.url, server.ca);
  const outcomes: Outcome[] = [];
  try {
    const owner = await foundOrganization(server.url, 'owner@bench.test');
    await seedVault(server.url, owner.token, owner.orgId, owner.account);
    const login = await registerAndLogin(server.url, 'login@bench.test');
    const { apiKey } = JSON.parse(await call(server.url, 'POST', `/api/organizations/${owner.orgId}/api-key`, { token: owner.token, json: { masterPasswordHash: owner.account.masterPasswordHash } })) as { apiKey: string };
    const orgTokenOf = async (c: typeof client) =>
      (
        await c.send<{ access_token: string }>('POST', '/identity/connect/token', {
          form: { grant_type: 'client_credentials', scope: 'api.organization', client_id: `organization.${owner.orgId}`, client_secret: apiKey },
        })
      ).access_token;
    const ctx: BudgetContext = { client, syncToken: owner.token, syncItems: ITEMS, loginForm: loginFormFor(login.account.email, login.account.masterPasswordHash), orgToken: await orgTokenOf(client) };
    // That the vault is what every sync will be checked against.
    await iteration('sync.js', ctx, new Recorder())();
    for (const script of SCRIPTS.filter((s) => !ONLY || ONLY.includes(s.name))) {
      const label = script.name === 'login.js' ? `${script.name} (${Number(ITERATIONS).toLocaleString('en-US')} iterations)` : script.name === 'groups.js' ? `${script.name} (public API limit off)` : script.name;
      console.error(`${engine}: ${label}`);
      outcomes.push({ engine, label, script, ...(await budget(script, label, ctx, server.pid)) });
      if (script.name === 'login.js') {
        const officialLabel = `login.js (official hash cost: ${officialIterations.toLocaleString('en-US')} iterations)`;
        console.error(`${engine}: ${officialLabel}`);
        const officialCtx = { ...ctx, loginForm: loginFormFor(official.account.email, official.account.masterPasswordHash) };
        outcomes.push({ engine, label: officialLabel, script, ...(await budget(script, officialLabel, officialCtx, server.pid)) });
      }
    }

    // groups.js's replay once more with the default per-organization limit, as an operator runs it.
    if (ONLY && !ONLY.includes('groups.js')) return outcomes;
    await client.close();
    await server.stop();
    server = await startHttpsServer(database.url, SERVER_ENV);
    client = createClient(server.url, server.ca);
    const groups = SCRIPTS.find((s) => s.name === 'groups.js')!;
    const label = 'groups.js (default public API limit)';
    console.error(`${engine}: ${label}`);
    const { constant, ramping } = scenarioRates(groups, COMPRESS);
    const limitedCtx = { ...ctx, client, orgToken: await orgTokenOf(client) };
    const replay = await judge(groups, label, limitedCtx, [constant, ramping], lengthOf(groups) / COMPRESS, server.pid, 0);
    outcomes.push({ engine, label, script: groups, replay, steps: [], best: undefined, firstFailed: undefined, replayOnly: true });
  } finally {
    await client.close();
    await server.stop();
    await database.drop();
  }
  return outcomes;
}

const ms = (value: number) => (Number.isNaN(value) ? '–' : value < 100 ? value.toFixed(1) : value.toFixed(0));
const pct = (value: number) => `${(value * 100).toFixed(2)} %`;

const hash = officialEquivalentIterations();
const loadBefore = loadavg()[0] ?? 0;
const started = new Date();
const outcomes: Outcome[] = [];
for (const engine of ENGINES) outcomes.push(...(await runEngine(engine, hash.iterations)));
const loadAfter = loadavg()[0] ?? 0;

console.log(`## Bitwarden's budgets replayed (bitwarden/server perf/load/ at ${BUDGET_COMMIT.slice(0, 10)})\n`);
console.log(
  `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}, load average ${loadBefore.toFixed(1)} at the start and ${loadAfter.toFixed(1)} at the end. ` +
    `Ramps ${COMPRESS === 1 ? 'exactly as long as the scripts (10 minutes)' : `${COMPRESS}x shorter than the scripts' 10 minutes (the same rates)`}; headroom steps of ${STEP_SECONDS} s at a constant rate, k doubled from 1 to at most ${MAX_K}, then ${BISECTIONS} bisection(s). ` +
    `Synced vault: ${ITEMS} items (60 % own, 40 % in an organization collection). Server: PASSWORD_ITERATIONS ${ITERATIONS}, hashing concurrency its default for this machine. ` +
    `The official server's hash (PBKDF2-HMAC-SHA512, 100,000 iterations) took ${hash.sha512Ms.toFixed(0)} ms here against ${hash.sha256Ms.toFixed(0)} ms for Strongroom's 600,000 of SHA-256: ${hash.iterations.toLocaleString('en-US')} iterations of SHA-256 cost the same.\n`,
);
console.log('| engine | script | their peak rate | p95 threshold | p95 at their rates | failed at their rates | headroom k | rate held | p95 there | failed there (shed) | first k not held | server CPU ms/request | generator CPU ms/request |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const o of outcomes) {
  const unit = o.script.name === 'groups.js' ? 'iterations/s' : '/s';
  const b = o.best;
  const nf = o.firstFailed;
  console.log(
    `| ${o.engine} | ${o.label} | ${peakPerSecond(o.script).toFixed(2)} ${unit} | ${o.script.thresholdMs} ms | ${ms(o.replay.p95)} ms | ${pct(o.replay.failRate)} (${o.replay.failed} of ${o.replay.requests}) | ` +
      `${o.replayOnly ? 'not searched' : b ? `${b.k}x${!nf ? ' or more' : ''}` : '< 1x'} | ${b ? `${b.perSecond.toFixed(1)} ${unit}` : '–'} | ${b ? `${ms(b.p95)} ms` : '–'} | ${b ? `${pct(b.failRate)} (${b.shed})` : '–'} | ` +
      `${nf ? `${nf.k}x: p95 ${ms(nf.p95)} ms, failed ${pct(nf.failRate)}, shed ${nf.shed}` : '–'} | ${b ? b.serverCpuPerRequest.toFixed(2) : '–'} | ${b ? `${b.generatorCpuPerRequest.toFixed(2)} (${(b.generatorCpuShare * 100).toFixed(0)} % of a core)` : '–'} |`,
  );
}
console.log('\nEvery step:\n');
console.log('| engine | script | k | rate | requests | p50 ms | p95 ms | p99 ms | failed | shed | held | server CPU ms/req | generator CPU ms/req | worst generator lag ms |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const o of outcomes) {
  for (const s of [o.replay, ...o.steps]) {
    console.log(
      `| ${o.engine} | ${o.label} | ${s.k || 'replay'} | ${s.k ? s.perSecond.toFixed(1) : `ramp to ${peakPerSecond(o.script).toFixed(2)}`} | ${s.requests} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.p99)} | ${pct(s.failRate)} | ${s.shed} | ${s.held ? 'yes' : 'no'} | ${s.serverCpuPerRequest.toFixed(2)} | ${s.generatorCpuPerRequest.toFixed(2)} | ${s.worstLag.toFixed(0)} |`,
    );
    for (const problem of s.problems) console.log(`|  |  |  | ${problem.replace(/\|/g, '/')} |  |  |  |  |  |  |  |  |  |  |`);
  }
}

for (const o of outcomes) {
  const what = `${o.engine}, ${o.label}`;
  if (o.replay.requests === 0) continue;
  summary('budgets', { what: `${what}, p95 at its own rates`, strongroom: o.replay.p95, unit: 'ms', better: 'lower', target: `< ${o.script.thresholdMs} ms`, met: o.replay.p95 < o.script.thresholdMs });
  summary('budgets', { what: `${what}, failed at its own rates`, strongroom: o.replay.failRate * 100, unit: '%', better: 'lower', target: '< 1 %', met: o.replay.failRate < 0.01 });
  if (o.replayOnly) continue;
  summary('budgets', { what: `${what} headroom${o.firstFailed ? '' : ` (the search's top, ${MAX_K}x, held)`}`, strongroom: o.best?.k ?? 0, unit: 'x', better: 'higher', target: '≥ 100x', met: (o.best?.k ?? 0) >= 100 });
}
