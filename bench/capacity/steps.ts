/**
 * The model played at one rate with every process's CPU time read around it (capacity-fleet.ts):
 * each server instance, PostgreSQL's backends, nginx, Redis and the generator itself, per model
 * request. And the ladder: rising rates until a limit breaks (sync p95 250 ms, writes p95 100 ms,
 * an error), the largest rate held being what a setup serves.
 */
import { play, type OperationFigures } from './arrivals.js';
import type { Client } from './client.js';
import type { PostgresCpu} from './cpu.js';
import { cpuMs, machineBusyMs, ownCpuMs, treeCpuMs } from './cpu.js';
import { BUSY_HOUR_PER_1000 } from './model.js';
import { modelArrivals } from './operations.js';
import type { Population } from './population.js';

export const LIMITS = { syncP95: 250, writeP95: 100 };

/** Requests a second the model sends per 1,000 people in the busy hour. */
export const REQUESTS_PER_1000 = Object.values(BUSY_HOUR_PER_1000).reduce((a, b) => a + b, 0);

export interface Processes {
  /** The server instances' process ids (read at each step: a restart changes them). */
  instances: () => (number | undefined)[];
  nginx?: () => number | undefined;
  redis?: number;
  postgres?: PostgresCpu;
}

export interface Target {
  client: Client;
  population: Population;
  hubUrl: string;
  ca: string;
}

export interface StepResult {
  people: number;
  requests: number;
  seconds: number;
  errors: number;
  ok: boolean;
  syncP95: number;
  writeP95: number;
  figures: OperationFigures[];
  problems: Map<string, number>;
  worstLag: number;
  /** CPU ms per model request, by process. */
  perRequest: { instances: number[]; postgres: number; nginx: number; redis: number; generator: number; others: number };
  /** Share of the machine's two cores busy, by anything (other people's runs included). */
  machineBusy: number;
  /** Share of one core each instance was busy. */
  busy: number[];
}

export async function step(target: Target, processes: Processes, people: number, seconds: number): Promise<StepResult> {
  const pids = processes.instances();
  const before = { instances: pids.map(cpuMs), nginx: treeCpuMs(processes.nginx?.()), redis: cpuMs(processes.redis), generator: ownCpuMs(), machine: machineBusyMs() };
  await processes.postgres?.start();
  const result = await play(modelArrivals(target.client, target.population, { people, hubUrl: target.hubUrl, ca: target.ca }), seconds);
  const postgres = (await processes.postgres?.total()) ?? 0;
  const figures = result.recorder.figures();
  const requests = figures.reduce((n, f) => n + f.count, 0);
  const per = (ms: number) => ms / Math.max(1, requests);
  const spent = pids.map((pid, i) => cpuMs(pid) - before.instances[i]!);
  const machine = machineBusyMs() - before.machine;
  const nginx = treeCpuMs(processes.nginx?.()) - before.nginx;
  const redis = cpuMs(processes.redis) - before.redis;
  const generator = ownCpuMs() - before.generator;
  const ours = spent.reduce((a, b) => a + b, 0) + postgres + nginx + redis + generator;
  const of = (name: string) => figures.find((f) => f.name === name);
  const syncP95 = of('sync')?.p95 ?? NaN;
  const writeP95 = of('write')?.p95 ?? NaN;
  const errors = result.recorder.errors;
  return {
    people,
    requests,
    seconds,
    errors,
    ok: errors === 0 && !(syncP95 >= LIMITS.syncP95) && !(writeP95 >= LIMITS.writeP95),
    syncP95,
    writeP95,
    figures,
    problems: result.recorder.problems,
    worstLag: result.worstLag,
    perRequest: {
      instances: spent.map(per),
      postgres: per(postgres),
      nginx: per(nginx),
      redis: per(redis),
      generator: per(generator),
      others: per(Math.max(0, machine - ours)),
    },
    machineBusy: machine / (seconds * 1000 * 2),
    busy: spent.map((ms) => ms / (seconds * 1000)),
  };
}

export interface Setup {
  name: string;
  /** Makes this setup the one the generator's requests reach (e.g. routes nginx). */
  use: () => Promise<void>;
}

/**
 * Rates of `from` people, then each `factor` times the last, for each of `setups` in turn at each
 * rate (so that whatever else the machine runs meanwhile falls on all of them alike), until every
 * setup has broken a limit or `most` rates were played; answers each setup's steps (its last held
 * one is what it serves). With `retries`, a step that breaks a limit is played again that many
 * times and counts as held when one of them holds: on a machine others share, one spike of their
 * load breaks a 30-second p95.
 */
export async function ladders(target: Target, processes: Processes, setups: Setup[], from: number, factor: number, seconds: number, most: number, log: (line: string) => void, retries = 0): Promise<StepResult[][]> {
  const steps = setups.map((): StepResult[] => []);
  const holding = setups.map(() => true);
  for (let people = from, n = 0; n < most && holding.some(Boolean); n++, people = Math.round((people * factor) / 100) * 100) {
    for (const [i, setup] of setups.entries()) {
      if (!holding[i]) continue;
      await setup.use();
      let result: StepResult | undefined;
      for (let attempt = 0; attempt <= retries && !result?.ok; attempt++) {
        result = await step(target, processes, people, seconds);
        log(`${setup.name}, rates of ${people} people${attempt > 0 ? ' (again)' : ''}: ${result.requests} requests, sync p95 ${result.syncP95.toFixed(0)} ms, writes p95 ${result.writeP95.toFixed(0)} ms, ${result.errors} errors, instances busy ${result.busy.map((b) => `${(b * 100).toFixed(0)} %`).join(' / ')}, machine ${(result.machineBusy * 100).toFixed(0)} %`);
        for (const [problem, count] of result.problems) log(`  error ×${count}: ${problem}`);
        steps[i]!.push(result);
      }
      if (!result?.ok) holding[i] = false;
    }
  }
  return steps;
}

/** The last step that held the limits (undefined when the first broke them). */
export const held = (steps: StepResult[]) => steps.filter((s) => s.ok).at(-1);
