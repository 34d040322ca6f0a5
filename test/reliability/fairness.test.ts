/**
 * Nobody can slow down everybody (issue #36): each abuse scenario (test/support/fairness-scenarios.ts)
 * runs against the built server in a process of its own while another user syncs and edits from
 * another address (test/support/fairness.ts), and that user's latency, the server's longest
 * event-loop stall, its memory afterwards and what was written are checked.
 *
 * The issue's targets (p99 under 100 ms, stalls under 50 ms, memory back within 20 %) are measured
 * by bench/fairness.ts; this test asserts twenty times the latency and stall targets and ten times
 * the memory one (CI_MULTIPLES). On the shared 2-core
 * machine these were written on (load average about 10), scenarios the server withstands showed
 * p99s up to about 420 ms and stalls up to about 300 ms, and memory stays up after a large body
 * until V8's next full collection, which an idle process may not run for long (docs/benchmarks.md,
 * Fairness under abuse); the faults this catches cost seconds and hundreds of megabytes. In CI's
 * PostgreSQL pass, beside two other test workers, five imports at once gave the victim a p99 of
 * 1.2 s and a 465 ms stall; before the fixes they held the loop for seconds.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checks, describeFigures, runScenario } from '../support/fairness.js';
import { CI_SCENARIOS } from '../support/fairness-scenarios.js';
import { createSchema } from '../support/pg-schema.js';
import { killPrograms } from '../support/program.js';
import { TEST_DATABASE_URL, TEST_ENGINE } from '../support/test-server.js';

/**
 * The victim's p99 under 2 s, stalls under 1 s, memory back within +250 %. The memory multiple
 * was 10 until the server came to give back its start's memory a second after it listens (issue
 * #43): "before" is now about 14 MB lower (84 against about 98 MB in CI's PostgreSQL pass), and
 * five imports at once leave the same 150–170 MB of uncollected garbage 2 s after, which read
 * +201 % there. 12.5 keeps the ceiling where it was, about 290 MB.
 */
const CI_MULTIPLES = { victimP99: 20, stall: 20, memoryGrowth: 12.5 };
const SECONDS = 3;
const SETTLE_SECONDS = 2;

const folder = mkdtempSync(join(tmpdir(), 'strongroom-fairness-'));
afterAll(() => {
  // Each run kills its server; this is for a run cut short.
  killPrograms();
  rmSync(folder, { recursive: true, force: true });
});

/** A database of the scenario's own: a SQLite file, or a PostgreSQL schema dropped after the run (test/global-setup.ts). */
async function databaseUrl(): Promise<string> {
  const name = randomBytes(4).toString('hex');
  if (TEST_ENGINE === 'sqlite') return `sqlite:${join(folder, `${name}.sqlite`)}`;
  return createSchema(TEST_DATABASE_URL, `t_${process.env.STRONGROOM_TEST_RUN ?? 'norun'}_fair_${name}`);
}

describe(`another user's sync and edits under abuse (${TEST_ENGINE})`, () => {
  for (const scenario of CI_SCENARIOS) {
    it(`stay fast, and nothing is lost or half-written, under ${scenario.name}`, async () => {
      const dataDir = mkdtempSync(join(folder, 'data-'));
      const figures = await runScenario(scenario, { databaseUrl: await databaseUrl(), dataDir, seconds: SECONDS, settleSeconds: SETTLE_SECONDS, env: { PASSWORD_ITERATIONS: '100000' } });
      console.log(`fairness: ${describeFigures(figures)}`);
      const missed = checks(figures, CI_MULTIPLES).filter((check) => !check.met);
      expect(missed.map((check) => `${check.what}: ${check.figure}, over the limit of ${check.limit}`)).toEqual([]);
    }, 90_000);
  }
});
