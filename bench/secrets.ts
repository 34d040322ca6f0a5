/**
 * Secrets Manager benchmark: an organization with 10,000 secrets listed by its owner, the
 * machine-account sync of the 5,000 its machine account reads, get-by-ids of 1,000 and
 * machine-account token logins, on SQLite and PostgreSQL with the server in its own process;
 * each listing set against a bare Node http server sending the same bytes, and get-by-ids also
 * against the framework floor (bench/framework-floor-server.ts: Fastify parsing and checking the
 * same body before sending the same bytes). Not a test.
 *
 *   npx tsx bench/secrets.ts                    # SQLite, and PostgreSQL when BENCH_POSTGRES_URL is set
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:55433/strongroom_test npx tsx bench/secrets.ts
 *
 * Options (environment): BENCH_SECRETS (10000), BENCH_SECONDS (10), BENCH_ENGINES (sqlite,postgres),
 * BENCH_CPU_PROF (a folder: the server runs with --cpu-prof writing there), BENCH_ROUTES (which
 * measurements, of list,sync,ids,login; all by default: `ids` with BENCH_CPU_PROF profiles get-by-ids
 * alone, beside the seeding).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type autocannon from 'autocannon';
import { decryptText, encryptText, type SymmetricKey } from '../test/support/bw-crypto.js';
import { accessTokenBody, machineLoginForm } from '../test/support/sm.js';
import { call, foundOrganization, ceilingFor, CLIENT_HEADERS, cpuMsOf, databaseFor, ENGINES, measure, Results, SECONDS, startServer, type Figures, type Running } from './harness.js';

const SECRETS = Number(process.env.BENCH_SECRETS ?? 10_000);
const PER_PROJECT = 1000;
/** The official import limit is 6,000 secrets; five projects of 1,000 a batch. */
const PROJECTS_PER_IMPORT = 5;
const BY_IDS = 1000;
const CPU_PROF = process.env.BENCH_CPU_PROF;
const SERVER_ENV = { DEPLOYMENT: 'cloud' };
const ROUTES = new Set((process.env.BENCH_ROUTES ?? 'list,sync,ids,login').split(','));

interface Seeded {
  orgId: string;
  ownerToken: string;
  machineToken: string;
  loginForm: Record<string, string>;
  grantedSecrets: number;
}


/** Projects of 1,000 secrets each, imported five projects at a time; answers the ids of the projects holding the first half. */
async function importSecrets(base: string, token: string, orgId: string, orgKey: SymmetricKey): Promise<{ granted: string[]; grantedSecrets: number }> {
  const projects = Math.ceil(SECRETS / PER_PROJECT);
  const sizeOf = (p: number) => Math.min(PER_PROJECT, SECRETS - p * PER_PROJECT);
  for (let first = 0; first < projects; first += PROJECTS_PER_IMPORT) {
    const batch = Array.from({ length: Math.min(PROJECTS_PER_IMPORT, projects - first) }, (_, i) => ({ id: randomUUID(), index: first + i }));
    const secrets = batch.flatMap((project) =>
      Array.from({ length: sizeOf(project.index) }, (_, i) => {
        const n = project.index * PER_PROJECT + i;
        return {
          id: randomUUID(),
          key: encryptText(`SECRET_${n}`, orgKey),
          value: encryptText(`value-${n}-${randomBytes(12).toString('base64')}`, orgKey),
          note: encryptText(n % 5 === 0 ? `Rotated quarterly; owner team ${n % 7}` : '', orgKey),
          projectIds: [project.id],
        };
      }),
    );
    const json = { projects: batch.map((p) => ({ id: p.id, name: encryptText(`project-${p.index}`, orgKey) })), secrets };
    await call(base, 'POST', `/api/sm/${orgId}/import`, { token, json });
  }
  const listed = JSON.parse(await call(base, 'GET', `/api/organizations/${orgId}/projects`, { token })) as { data: { id: string; name: string }[] };
  const granted: string[] = [];
  let grantedSecrets = 0;
  for (const project of listed.data) {
    const index = Number(decryptText(project.name, orgKey).slice('project-'.length));
    if ((index + 1) * PER_PROJECT <= Math.max(PER_PROJECT, SECRETS / 2)) {
      granted.push(project.id);
      grantedSecrets += sizeOf(index);
    }
  }
  return { granted, grantedSecrets };
}

/** A machine account reading `projects`, an access token made as the web app makes it, and its login. */
async function machineAccount(base: string, token: string, orgId: string, orgKey: SymmetricKey, projects: string[]) {
  const account = JSON.parse(await call(base, 'POST', `/api/organizations/${orgId}/service-accounts`, { token, json: { name: encryptText('deploy', orgKey) } })) as { id: string };
  await call(base, 'PUT', `/api/service-accounts/${account.id}/granted-policies`, {
    token,
    json: { projectGrantedPolicyRequests: projects.map((grantedId) => ({ grantedId, read: true, write: false })) },
  });
  const secret = randomBytes(16);
  const created = JSON.parse(
    await call(base, 'POST', `/api/service-accounts/${account.id}/access-tokens`, { token, json: accessTokenBody(orgKey, secret, 'bench token') }),
  ) as { id: string; clientSecret: string };
  const loginForm = machineLoginForm(`0.${created.id}.${created.clientSecret}:${secret.toString('base64')}`);
  const login = JSON.parse(await call(base, 'POST', '/identity/connect/token', { form: loginForm })) as { access_token: string };
  return { machineToken: login.access_token, loginForm };
}

async function seed(base: string): Promise<Seeded> {
  const { orgId, token: ownerToken, orgKey } = await foundOrganization(base, 'sm-bench@example.com', { secretsManager: true });
  const { granted, grantedSecrets } = await importSecrets(base, ownerToken, orgId, orgKey);
  return { orgId, ownerToken, grantedSecrets, ...(await machineAccount(base, ownerToken, orgId, orgKey, granted)) };
}

const results = new Results();
/**
 * Server CPU time a request, Strongroom's against the ceiling's: on a machine shared with other
 * work the wall-clock figures swing with the load, the CPU a request costs much less.
 */
const cpuLines: string[] = [];
/** The framework floor against the ceiling, where it is measured (get-by-ids). */
const floorLines: string[] = [];

/** Runs `measure` and answers its figures with the CPU time `target` spent a request meanwhile. */
async function measuredWithCpu(target: Running, run: () => Promise<Figures>): Promise<{ figures: Figures; cpuMs: number }> {
  const before = cpuMsOf(target.pid);
  const figures = await run();
  const requests = figures.rps * SECONDS;
  return { figures, cpuMs: requests > 0 ? (cpuMsOf(target.pid) - before) / requests : 0 };
}

/**
 * One route at 1 and 4 connections, each run followed by the ceiling sending the same bytes with
 * the same settings, and with `floor` by the framework floor (bench/framework-floor-server.ts).
 */
async function againstCeiling(engine: string, what: string, server: Running, request: { path: string; token: string; method?: 'GET' | 'POST'; json?: unknown }, floor = false) {
  const method = request.method ?? 'GET';
  const body = request.json === undefined ? undefined : JSON.stringify(request.json);
  const bytes = await call(server.url, method, request.path, { token: request.token, ...(request.json === undefined ? {} : { json: request.json }) });
  console.error(`${engine}: ${what}, body ${bytes.length.toLocaleString('en-US')} bytes`);
  const ceiling = await ceilingFor(`${what.replace(/\W+/g, '-')}-${engine}`, bytes);
  const framework = floor ? await ceilingFor(`${what.replace(/\W+/g, '-')}-${engine}-floor`, bytes, 'bench/framework-floor-server.ts') : undefined;
  const settings: Partial<autocannon.Options> = { method, ...(body ? { body } : {}) };
  const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${request.token}`, ...(body ? { 'content-type': 'application/json' } : {}) };
  try {
    for (const connections of [1, 4]) {
      const { figures: ours, cpuMs: oursCpu } = await measuredWithCpu(server, () => measure({ url: server.url + request.path, headers, connections, ...settings }));
      const { figures: bare, cpuMs: bareCpu } = await measuredWithCpu(ceiling, () => measure({ url: ceiling.url + request.path, headers, connections, ...settings }));
      cpuLines.push(`${engine}, ${what}, ${connections} connection(s): ${oursCpu.toFixed(2)} ms against ${bareCpu.toFixed(2)} ms (${(oursCpu / bareCpu).toFixed(2)}x)`);
      results.row(engine, what, connections, ours);
      results.row(engine, `${what}, bare http ceiling`, connections, bare);
      results.ratio(`${engine}, ${what}, ${connections} connection(s)`, ours, bare, { summaryBy: 'throughput', withinCeiling: 2 });
      if (framework) {
        const { figures: least, cpuMs: leastCpu } = await measuredWithCpu(framework, () => measure({ url: framework.url + request.path, headers, connections, ...settings }));
        results.row(engine, `${what}, framework floor`, connections, least);
        floorLines.push(
          `${engine}, ${what}, ${connections} connection(s): throughput ${(bare.rps / least.rps).toFixed(2)}x the ceiling's (Strongroom ${(bare.rps / ours.rps).toFixed(2)}x), CPU ${leastCpu.toFixed(2)} ms a request (Strongroom ${oursCpu.toFixed(2)}, the ceiling ${bareCpu.toFixed(2)})`,
        );
      }
    }
  } finally {
    await ceiling.stop();
    await framework?.stop();
  }
}

async function benchEngine(engine: string) {
  const database = await databaseFor(engine);
  const server = await startServer(database.url, SERVER_ENV, CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []);
  try {
    const seeded = await seed(server.url);
    const synced = JSON.parse(await call(server.url, 'GET', `/api/organizations/${seeded.orgId}/secrets/sync`, { token: seeded.machineToken })) as {
      secrets: { data: { id: string }[] } | null;
    };
    const readable = synced.secrets?.data.map((s) => s.id) ?? [];
    if (readable.length !== seeded.grantedSecrets) throw new Error(`the machine account syncs ${readable.length} secrets, expected ${seeded.grantedSecrets}`);

    if (ROUTES.has('list')) {
      await againstCeiling(engine, `list ${SECRETS} secrets (owner)`, server, { path: `/api/organizations/${seeded.orgId}/secrets`, token: seeded.ownerToken });
    }
    if (ROUTES.has('sync')) {
      await againstCeiling(engine, `sync ${readable.length} secrets (machine)`, server, { path: `/api/organizations/${seeded.orgId}/secrets/sync`, token: seeded.machineToken });
    }
    const ids = readable.slice(0, BY_IDS);
    if (ROUTES.has('ids')) {
      await againstCeiling(engine, `get-by-ids ${ids.length} (machine)`, server, { path: '/api/secrets/get-by-ids', token: seeded.machineToken, method: 'POST', json: { ids } }, true);
    }

    const form = new URLSearchParams(seeded.loginForm).toString();
    for (const connections of ROUTES.has('login') ? [1, 4] : []) {
      const login = await measure({
        url: `${server.url}/identity/connect/token`,
        method: 'POST',
        headers: { ...CLIENT_HEADERS, 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
        connections,
      });
      results.row(engine, 'machine token login', connections, login);
    }
  } finally {
    await server.stop();
    await database.drop();
  }
}

for (const engine of ENGINES) await benchEngine(engine);
results.print(`${SECRETS} secrets`, 'Latency relative to the ceiling (Strongroom / bare http):');
console.log('\nServer CPU time a request (Strongroom / bare http):');
for (const line of cpuLines) console.log(`- ${line}`);
if (floorLines.length > 0) console.log('\nThe framework floor (Fastify parsing and checking the same body, sending the same bytes):');
for (const line of floorLines) console.log(`- ${line}`);
