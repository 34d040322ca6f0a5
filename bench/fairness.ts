/**
 * Fairness under abuse (issue #36): each abuse scenario of test/support/fairness-scenarios.ts on
 * a fresh server (the build, as `npm start` runs it) while a victim user syncs and edits from
 * another address, its figures beside the targets: the victim's p99 under 100 ms, the
 * server's longest event-loop stall under 50 ms, resident memory back within 20 % of where it
 * started, nothing lost or half-written. The CI test (test/reliability/fairness.test.ts) runs the
 * same scenarios, shorter, against a multiple of these targets. Linux only (/proc).
 *
 *   npx tsx bench/fairness.ts
 *
 * Options (environment): BENCH_SECONDS (5, each attack), BENCH_SETTLE_SECONDS (10, idle before
 * memory is read again), BENCH_ENGINES / BENCH_POSTGRES_URL (harness.ts), BENCH_SCENARIOS (a
 * comma list of none, bombs-1, bombs-6, collect, import-1, import-5, multipart, slow, floods; all
 * by default). `none` is the victim alone: the machine's own noise, to read the others against.
 * The server keeps its default PASSWORD_ITERATIONS (600,000), as operators run it; the test uses
 * 100,000.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checks, describeFigures, runScenario, TARGETS, type Figures, type Scenario } from '../test/support/fairness.js';
import { anonymousJsonBombs, eventLogFlood, loginAndRegistrationFloods, malformedMultipart, noAttack, slowBodies, vaultImports } from '../test/support/fairness-scenarios.js';
import { databaseFor, ENGINES, ROOT, summary } from './harness.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);

const ALL: Record<string, Scenario> = {
  none: noAttack(),
  'bombs-1': anonymousJsonBombs(1),
  'bombs-6': anonymousJsonBombs(6),
  collect: eventLogFlood(),
  'import-1': vaultImports(1),
  'import-5': vaultImports(5),
  multipart: malformedMultipart(4),
  slow: slowBodies(200),
  floods: loginAndRegistrationFloods(10),
};
const chosen = (process.env.BENCH_SCENARIOS ?? Object.keys(ALL).join(',')).split(',');
const unknown = chosen.filter((name) => !(name in ALL));
if (unknown.length > 0) throw new Error(`No such scenario: ${unknown.join(', ')}. Scenarios: ${Object.keys(ALL).join(', ')}.`);

execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: ROOT, stdio: 'inherit' });

const runs: { engine: string; figures: Figures }[] = [];
for (const engine of ENGINES) {
  for (const name of chosen) {
    const database = await databaseFor(engine);
    const dataDir = mkdtempSync(join(tmpdir(), 'sr-fairness-'));
    try {
      const figures = await runScenario(ALL[name] as Scenario, { databaseUrl: database.url, dataDir, seconds: SECONDS, settleSeconds: SETTLE_SECONDS });
      console.error(`${engine}, ${describeFigures(figures)}`);
      runs.push({ engine, figures });
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

const mark = (met: boolean) => (met ? 'yes' : '**no**');
console.log(`Fairness under abuse, ${SECONDS} s per attack, memory read ${SETTLE_SECONDS} s after it, Node ${process.version}\n`);
console.log(`| engine | scenario | victim's requests | p50 ms | p99 ms (< ${TARGETS.victimP99Ms}) | max ms | failed | longest stall ms (< ${TARGETS.stallMs}) | RSS before → after, MB (≤ +${TARGETS.memoryGrowth * 100} %) | peak MB | lost or half-written | met |`);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const { engine, figures: f } of runs) {
  const verdicts = checks(f);
  const stall = f.stallMs === null ? 'no answer' : f.stallMs.toFixed(0);
  console.log(
    `| ${engine} | ${f.scenario} | ${f.victim.requests} | ${f.victim.p50.toFixed(1)} | ${f.victim.p99.toFixed(0)} | ${f.victim.max.toFixed(0)} | ${f.victim.failed} | ${stall} | ${f.rss.beforeMb.toFixed(0)} → ${f.rss.afterMb.toFixed(0)} | ${f.rss.peakMb.toFixed(0)} | ${f.problems.length === 0 ? 'nothing' : f.problems.join('; ')} | ${mark(verdicts.every((c) => c.met))} |`,
  );
  const [p99, , stallCheck, memory] = verdicts;
  summary('fairness', { what: `${engine}, ${f.scenario}: the victim's p99`, strongroom: f.victim.p99, unit: 'ms', better: 'lower', target: p99!.limit, met: p99!.met });
  summary('fairness', { what: `${engine}, ${f.scenario}: the longest event-loop stall`, strongroom: f.stallMs ?? NaN, unit: 'ms', better: 'lower', target: stallCheck!.limit, met: stallCheck!.met });
  summary('fairness', { what: `${engine}, ${f.scenario}: resident memory after, against before`, strongroom: f.rss.afterMb, ceiling: f.rss.beforeMb, unit: 'MB', better: 'lower', target: memory!.limit, met: memory!.met });
}
console.log('\nWhat the attackers got:\n');
for (const { engine, figures: f } of runs) {
  const outcomes = Object.entries(f.attacks).map(([outcome, n]) => `${outcome} × ${n}`);
  console.log(`- ${engine}, ${f.scenario}: ${outcomes.length > 0 ? outcomes.join(', ') : 'nothing sent'}; the measuring process's own longest stall ${f.clientStallMs.toFixed(0)} ms`);
}
