/**
 * Bitwarden's own load budgets, as facts read from the k6 scripts in `perf/load/` of
 * bitwarden/server at one pinned commit (docs/capacity.md says which and why), and what one
 * iteration of each does, played through Strongroom's routes with the answers checked. Nothing
 * here is their code: only the rates, stages, thresholds and requests the scripts describe.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { ramp, type Recorder } from './arrivals.js';
import { Shed, type Client } from './client.js';

/** The newest commit touching perf/load/ (2025-09-11, "Migrate k6 loadtests to Datadog"), the same files as main in November 2026. */
export const BUDGET_COMMIT = 'ba57ca5f6769d6e1edbd57702f1e2a96352f904a';

export type ScriptName = 'sync.js' | 'login.js' | 'config.js' | 'groups.js';

export interface BudgetScript {
  name: ScriptName;
  /** p95 of every request's duration must stay under this (k6 `http_req_duration: p(95)<…`). */
  thresholdMs: number;
  /** The constant-arrival-rate scenario: iterations a second for 10 minutes. */
  constantPerSecond: number;
  /** The ramping-arrival-rate scenario: start rate and stages, in iterations a minute. */
  startPerMinute: number;
  stages: [seconds: number, perMinute: number][];
  /** HTTP requests one iteration sends when all goes well. */
  requestsPerIteration: number;
}

/** The two scenarios of each script run at once (k6 starts every scenario at 0 unless told otherwise). */
export const SCRIPTS: BudgetScript[] = [
  {
    name: 'sync.js',
    thresholdMs: 1200,
    constantPerSecond: 0.5,
    startPerMinute: 30,
    stages: [[30, 30], [120, 75], [60, 60], [120, 100], [120, 90], [60, 120], [30, 150], [30, 60], [30, 0]],
    requestsPerIteration: 1,
  },
  {
    name: 'login.js',
    thresholdMs: 800,
    constantPerSecond: 2,
    startPerMinute: 60,
    stages: [[30, 60], [300, 120], [120, 150], [60, 180], [30, 200], [30, 90], [30, 0]],
    requestsPerIteration: 1,
  },
  {
    name: 'config.js',
    thresholdMs: 350,
    constantPerSecond: 1,
    startPerMinute: 60,
    stages: [[30, 60], [120, 150], [60, 90], [120, 200], [120, 120], [60, 180], [30, 250], [30, 90], [30, 0]],
    requestsPerIteration: 1,
  },
  {
    name: 'groups.js',
    thresholdMs: 400,
    constantPerSecond: 0.5,
    startPerMinute: 30,
    stages: [[30, 30], [120, 75], [60, 60], [120, 100], [120, 90], [60, 120], [30, 150], [30, 60], [30, 0]],
    requestsPerIteration: 4,
  },
];

/** The script's highest iteration rate, both scenarios together, per second. */
export function peakPerSecond(script: BudgetScript): number {
  return script.constantPerSecond + Math.max(...script.stages.map(([, target]) => target)) / 60;
}

/** Seconds the script runs (the constant scenario lasts as long as the ramp: 10 minutes). */
export function lengthOf(script: BudgetScript): number {
  return script.stages.reduce((sum, [seconds]) => sum + seconds, 0);
}

/**
 * The two scenarios' rates, each stage `compress` times shorter (the same rates, fewer
 * iterations): `compress` 1 is the script exactly.
 */
export function scenarioRates(script: BudgetScript, compress: number): { constant: (t: number) => number; ramping: (t: number) => number } {
  const length = lengthOf(script) / compress;
  const stages = script.stages.map(([seconds, target]) => [seconds / compress, target / 60] as [number, number]);
  const ramping = ramp(script.startPerMinute / 60, stages);
  return { constant: (t) => (t < length ? script.constantPerSecond : 0), ramping };
}

/** What the iterations need: the accounts, tokens and organization made before the run. */
export interface BudgetContext {
  client: Client;
  /** The synced account's token and how many items its sync must list. */
  syncToken: string;
  syncItems: number;
  /** The password grant's form for the login script (the master password hash, as k6 is given it). */
  loginForm: Record<string, string>;
  /** The organization's API key token (client_credentials, scope api.organization). */
  orgToken: string;
}

/** One HTTP request timed into `requests`: its latency if answered as expected, else its error or shed. */
async function timed<T>(requests: Recorder, name: string, send: () => Promise<T>): Promise<T> {
  const sent = performance.now();
  try {
    const answer = await send();
    requests.record(name, performance.now() - sent, 'ok');
    return answer;
  } catch (error) {
    requests.record(name, performance.now() - sent, error instanceof Shed ? 'shed' : error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

/** The password grant as the scripts' helper sends it: the web vault's client id, a Chrome device. */
export function loginFormFor(email: string, masterPasswordHash: string): Record<string, string> {
  return {
    grant_type: 'password',
    scope: 'api offline_access',
    client_id: 'web',
    deviceType: '9',
    deviceName: 'chrome',
    deviceIdentifier: 'a455f262-3d24-4bcd-b178-39dcd67d5c3f',
    username: email,
    password: masterPasswordHash,
  };
}

/**
 * One iteration of `name`, its requests timed into `requests` under the script's name. A failed
 * request ends the iteration (as k6's `fail()`), so later requests of it are not sent.
 */
export function iteration(name: ScriptName, ctx: BudgetContext, requests: Recorder): () => Promise<void> {
  const { client } = ctx;
  switch (name) {
    case 'sync.js': {
      // A full parse of every answer would cost the generator (which shares the cores) more CPU
      // than the server spends on it; an answer of the same length as one checked in full is
      // taken as the same answer (the vault does not change during the run).
      const checkedLength = new Map<boolean, number>();
      return async () => {
        const excludeDomains = Math.random() > 0.5;
        const text = await timed(requests, name, () => client.send<string>('GET', `/api/sync?excludeDomains=${excludeDomains}`, { token: ctx.syncToken, raw: true }));
        if (checkedLength.get(excludeDomains) === text.length) return;
        const sync = JSON.parse(text) as { object?: string; profile?: unknown; folders?: unknown; collections?: unknown; ciphers?: unknown[]; policies?: unknown; sends?: unknown };
        check(sync.object === 'sync' && sync.profile !== undefined, 'sync: not a sync answer');
        check([sync.folders, sync.collections, sync.policies, sync.sends].every(Array.isArray), 'sync: a list is missing');
        check(sync.ciphers?.length === ctx.syncItems, `sync: ${sync.ciphers?.length} items, not ${ctx.syncItems}`);
        checkedLength.set(excludeDomains, text.length);
      };
    }
    case 'login.js':
      return async () => {
        const login = await timed(requests, name, () => client.send<{ access_token?: string }>('POST', '/identity/connect/token', { form: ctx.loginForm, mayShed: true }));
        check(typeof login.access_token === 'string' && login.access_token !== '', 'login: no access token');
      };
    case 'config.js':
      return async () => {
        const config = await timed(requests, name, () => client.send<{ version?: string }>('GET', '/api/config', { token: ctx.syncToken }));
        check(typeof config.version === 'string' && config.version !== '', 'config: no version');
      };
    case 'groups.js':
      return async () => {
        const token = ctx.orgToken;
        const created = { name: `Name ${randomUUID()}`, accessAll: true, externalId: `External ${randomUUID()}` };
        const group = await timed(requests, name, () => client.send<{ id?: string }>('POST', '/api/public/groups', { token, json: created }));
        check(typeof group.id === 'string' && group.id !== '', 'groups: no id');
        const read = await timed(requests, name, () => client.send<{ name?: string }>('GET', `/api/public/groups/${group.id}`, { token }));
        check(read.name === created.name, 'groups: the name read is not the name written');
        const renamed = { ...created, name: `Name ${randomUUID()}` };
        await timed(requests, name, () => client.send('PUT', `/api/public/groups/${group.id}`, { token, json: renamed }));
        await timed(requests, name, () => client.send('DELETE', `/api/public/groups/${group.id}`, { token }));
      };
  }
}
