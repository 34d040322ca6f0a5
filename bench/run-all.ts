/**
 * `npm run bench`: every benchmark in bench/, one after another, each in its own process; then
 * the summary table (each headline figure, the bare ceiling measured beside it in the same run,
 * their ratio and the issue's target) written to docs/benchmarks.md between the summary markers.
 * The detailed sections below them stay as they are; each benchmark's own tables are kept in a
 * folder printed at the end, to paste into its section when the figures are worth keeping.
 *
 *   npm run bench                   # full sizes and durations (more than an hour on this machine)
 *   npm run bench -- --quick        # small data, short runs: a few minutes, to try it
 *   npm run bench -- vault lean     # only these (the others keep their rows in the table)
 *
 * A benchmark hands its rows over through harness.ts's `summary()` (JSON lines in the file named
 * by BENCH_SUMMARY_FILE); one that fails gets a row saying so, and the others still run. The
 * environment reaches every benchmark (BENCH_POSTGRES_URL, BENCH_REDIS_URL, BENCH_AMQP_URL, ...).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, createWriteStream } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, type SummaryRow } from './harness.js';

/** Files in bench/ that are not benchmarks: shared code and the helper servers the benchmarks start. */
const HELPERS = new Set(['harness', 'hub-clients', 'profiling', 'collect-ceiling-server', 'items', 'ceiling-server', 'file-ceiling-server', 'notifications-clients', 'run-all', 'framework-floor-server']);

/** Quick mode: small data and short runs, per benchmark (any other gets BENCH_SECONDS=2). */
const QUICK: Record<string, { env: Record<string, string>; args?: string[] }> = {
  vault: { env: { BENCH_ITEMS: '2000', BENCH_SECONDS: '2' } },
  secrets: { env: { BENCH_SECRETS: '2000', BENCH_SECONDS: '2' } },
  'rate-limit': { env: { BENCH_SECONDS: '2', BENCH_ROUNDS: '2', BENCH_REPEATS: '1' } },
  notifications: { env: { BENCH_CONNECTIONS: '500', BENCH_SECONDS: '3' } },
  events: { env: { BENCH_EVENTS: '20000', BENCH_SECONDS: '2' } },
  forwarding: { env: { BENCH_EVENTS: '2000' } },
  files: { env: { BENCH_FILE_MB: '10', BENCH_ROUNDS: '1', BENCH_SECONDS: '2' } },
  lean: { env: { BENCH_STARTS: '3', BENCH_SYNC_ITEMS: '2000', BENCH_SYNCS: '1000', BENCH_SECONDS: '3', BENCH_SETTLE_SECONDS: '3' } },
  'profile-sync': { env: {}, args: ['1000'] },
  'item-stamps': { env: {}, args: ['1000'] },
  fairness: { env: { BENCH_SECONDS: '2', BENCH_SETTLE_SECONDS: '2' } },
  budgets: { env: { BENCH_ITEMS: '30', BENCH_COMPRESS: '200', BENCH_STEP_SECONDS: '1', BENCH_MAX_K: '2', BENCH_BISECTIONS: '0', BENCH_SETTLE_SECONDS: '0.2' } },
  capacity: { env: { BENCH_QUICK: '1' } },
  'capacity-fleet': { env: { BENCH_QUICK: '1' } },
};

/**
 * The issue's targets for rows whose benchmark does not set one itself (matched on
 * `<benchmark>: <what>`), and whether a row meets it.
 */
const TARGETS: { match: RegExp; target: string; met: (row: SummaryRow) => boolean }[] = [
  { match: /^vault: .*first sync after one item changed.*mean latency/, target: '≤ 1.5x the ceiling', met: (r) => ratioOf(r) <= 1.5 },
  { match: /^vault: sqlite, (create|update) item/, target: '≥ 3,000 req/s', met: (r) => r.strongroom >= 3000 },
  { match: /^vault: postgres, (create|update) item/, target: '≥ 1,500 req/s', met: (r) => r.strongroom >= 1500 },
];

const BEGIN = '<!-- bench-summary:begin -->';
const END = '<!-- bench-summary:end -->';
const DOC = join(ROOT, 'docs/benchmarks.md');

interface Row extends SummaryRow {
  bench: string;
}

/** How many times the ceiling's cost Strongroom's figure is (1.00x is the ceiling). */
function ratioOf(row: SummaryRow): number {
  if (row.ceiling === undefined) return NaN;
  return row.better === 'lower' ? row.strongroom / row.ceiling : row.ceiling / row.strongroom;
}

function figure(value: number | undefined, unit: string): string {
  // A NaN handed over as JSON arrives as null.
  if (value === undefined || value === null || Number.isNaN(value)) return '';
  const digits = unit === 'ms' ? (value < 100 ? 1 : 0) : unit === 'MB' ? 1 : value < 100 ? 1 : 0;
  return `${value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })} ${unit}`;
}

function tableLine(row: Row): string {
  const known = TARGETS.find((t) => t.match.test(`${row.bench}: ${row.what}`));
  const target = row.target ?? known?.target ?? '';
  const met = row.met ?? (known ? known.met(row) : undefined);
  const ratio = ratioOf(row);
  return `| ${row.bench} | ${row.what} | ${figure(row.strongroom, row.unit)} | ${figure(row.ceiling, row.unit)} | ${Number.isNaN(ratio) ? '' : `${ratio.toFixed(2)}x`} | ${target} | ${met === undefined ? '' : met ? 'yes' : '**no**'} |`;
}

function run(name: string, quick: boolean, summaryFile: string, logFile: string): Promise<number> {
  const settings = quick ? (QUICK[name] ?? { env: { BENCH_SECONDS: '2' } }) : { env: {} };
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, ['--import', 'tsx', join('bench', `${name}.ts`), ...(settings.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...settings.env, BENCH_SUMMARY_FILE: summaryFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => {
    log.write(chunk);
    process.stdout.write(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  return new Promise((resolve) => child.on('close', (code) => log.end(() => resolve(code ?? 1))));
}

/** The table between the markers: this run's rows, and the earlier rows of benchmarks not run now. */
function writeSummary(rows: Row[], ran: Set<string>, heading: string): void {
  const doc = readFileSync(DOC, 'utf8');
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  const earlier =
    begin >= 0 && end > begin
      ? doc
          .slice(begin, end)
          .split('\n')
          .filter((line) => /^\| [\w-]+ \|/.test(line) && !line.startsWith('| benchmark |') && !ran.has(line.split('|')[1]?.trim() ?? ''))
      : [];
  const table = [
    BEGIN,
    earlier.length > 0 ? `${heading} It ran ${[...ran].join(', ')}; the other rows are from earlier runs.` : heading,
    '',
    '| benchmark | what | Strongroom | ceiling | ratio (1.00x = the ceiling) | target | met |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(tableLine),
    ...earlier,
    END,
  ].join('\n');
  const next =
    begin >= 0 && end > begin
      ? doc.slice(0, begin) + table + doc.slice(end + END.length)
      : doc.replace(/\n## /, `\n${table}\n\n## `);
  writeFileSync(DOC, next);
}

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const available = readdirSync(join(ROOT, 'bench'))
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => file.slice(0, -'.ts'.length))
  .filter((name) => !HELPERS.has(name))
  .sort();
const chosen = args.filter((arg) => !arg.startsWith('--'));
const unknown = chosen.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`No such benchmark: ${unknown.join(', ')}. Benchmarks: ${available.join(', ')}.`);
  process.exit(2);
}
const benches = chosen.length > 0 ? chosen : available;

const out = mkdtempSync(join(tmpdir(), 'strongroom-bench-'));
const summaryFile = join(out, 'summary.jsonl');
const started = new Date();
const load = loadavg()[0] ?? 0;
const rows: Row[] = [];
for (const name of benches) {
  console.error(`\n=== bench/${name}.ts${quick ? ' (quick)' : ''} ===`);
  const t = performance.now();
  const before = existsSync(summaryFile) ? readFileSync(summaryFile, 'utf8').length : 0;
  const code = await run(name, quick, summaryFile, join(out, `${name}.md`));
  const handed = existsSync(summaryFile) ? readFileSync(summaryFile, 'utf8').slice(before) : '';
  const own = handed
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row);
  rows.push(...own);
  if (code !== 0) rows.push({ bench: name, what: `failed (exit code ${code}; its output: ${join(out, `${name}.md`)})`, strongroom: NaN, unit: '', better: 'lower' });
  else if (own.length === 0) rows.push({ bench: name, what: 'ran; it reports no summary figures (see its own tables)', strongroom: NaN, unit: '', better: 'lower' });
  console.error(`=== bench/${name}.ts: exit ${code}, ${((performance.now() - t) / 1000).toFixed(0)} s ===`);
}

const heading = `Last run: ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${quick ? '`npm run bench -- --quick` (small data, short runs: the shape, not the figures)' : '`npm run bench`'}, Node ${process.version}, load average ${load.toFixed(1)} at the start.`;
writeSummary(rows, new Set(benches), heading);
console.log(`\n${heading}\n`);
console.log('| benchmark | what | Strongroom | ceiling | ratio | target | met |');
console.log('|---|---|---|---|---|---|---|');
for (const row of rows) console.log(tableLine(row));
console.error(`\nThe summary is in docs/benchmarks.md; each benchmark's own tables are in ${out}.`);
