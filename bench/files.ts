/**
 * Files benchmark: upload and download of a 100 MB attachment through the real routes (the
 * reserve call, the multipart upload, the signed download link), against a bare Node http server
 * copying the same bytes to and from a file; the server's resident memory while streaming; and
 * 1,000 concurrent anonymous accesses of a small text Send. SQLite, server in its own process.
 * Not a test.
 *
 *   npx tsx bench/files.ts
 *
 * Options (environment): BENCH_FILE_MB (100), BENCH_ROUNDS (3), BENCH_SECONDS (10).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptText } from '../test/support/bw-crypto.js';
import { cipherBody } from '../test/support/vault.js';
import autocannon from 'autocannon';
import { call, databaseFor, registerAndLogin, ROOT, SECONDS, startServer, summary, type Running } from './harness.js';

const MB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_FILE_MB ?? 100) * MB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ENC = '2.AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAA==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** The process's resident memory in MB, sampled until `stop`; answers the peak. */
function sampleRss(pid: number) {
  const read = () => {
    const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? Number(line[1]) / 1024 : 0;
  };
  const before = read();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, read())), 20);
  return { before, stop: () => (clearInterval(timer), Math.max(peak, read())) };
}

async function startFileCeiling(dir: string): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/file-ceiling-server.ts', dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((resolve) => (child.on('exit', () => resolve()), child.kill('SIGTERM'))) };
}

async function drain(response: Response): Promise<number> {
  let n = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) n += chunk.length;
  return n;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const mbps = (ms: number) => (SIZE / MB / (ms / 1000)).toFixed(0);

async function main() {
  const payload = randomBytes(SIZE);
  const dir = mkdtempSync(join(tmpdir(), 'sr-bench-files-'));
  const db = await databaseFor('sqlite');
  const server = await startServer(db.url, { FILES_DIR: join(dir, 'files'), FILE_MAX_MB: '500', ATTACHMENT_USER_QUOTA_MB: '10240', SEND_ACCESS_PER_MINUTE: '0', MAX_CONNECTIONS_PER_IP: '0' });
  const ceiling = await startFileCeiling(dir);
  try {
    const { token, account } = await registerAndLogin(server.url, 'files@bench.test');
    const item = JSON.parse(await call(server.url, 'POST', '/api/ciphers', { token, json: cipherBody('login', account.userKey) })) as { id: string };

    const up: number[] = [];
    const down: number[] = [];
    const upCeiling: number[] = [];
    const downCeiling: number[] = [];
    const memory: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = JSON.parse(await call(server.url, 'POST', `/api/ciphers/${item.id}/attachment/v2`, { token, json: { key: ENC, fileName: ENC, fileSize: SIZE } })) as { url: string; attachmentId: string };
      const form = new FormData();
      form.append('data', new Blob([payload]), ENC);
      const rss = server.pid ? sampleRss(server.pid) : undefined;
      let t = performance.now();
      const uploaded = await fetch(`${server.url}/api/ciphers/${started.url}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
      if (!uploaded.ok) throw new Error(`upload: ${uploaded.status} ${await uploaded.text()}`);
      up.push(performance.now() - t);
      const link = JSON.parse(await call(server.url, 'GET', `/api/ciphers/${item.id}/attachment/${started.attachmentId}`, { token })) as { url: string };
      const path = new URL(link.url);
      t = performance.now();
      const got = await drain(await fetch(`${server.url}${path.pathname}${path.search}`));
      down.push(performance.now() - t);
      if (got !== SIZE) throw new Error(`downloaded ${got} bytes`);
      if (rss) {
        const peak = rss.stop();
        memory.push(`${rss.before.toFixed(0)} → ${peak.toFixed(0)} MB`);
      }
      await call(server.url, 'DELETE', `/api/ciphers/${item.id}/attachment/${started.attachmentId}`, { token });

      t = performance.now();
      const ceilingUp = await fetch(`${ceiling.url}/`, { method: 'POST', body: new Blob([payload]) });
      await ceilingUp.arrayBuffer();
      upCeiling.push(performance.now() - t);
      t = performance.now();
      await drain(await fetch(`${ceiling.url}/`));
      downCeiling.push(performance.now() - t);
    }

    console.log(`\n${SIZE / MB} MB, median of ${ROUNDS} rounds (ms, MB/s):`);
    console.log('| transfer | Strongroom | bare Node http | ratio |');
    console.log('|---|---|---|---|');
    console.log(`| upload | ${median(up).toFixed(0)} ms (${mbps(median(up))} MB/s) | ${median(upCeiling).toFixed(0)} ms (${mbps(median(upCeiling))} MB/s) | ${(median(up) / median(upCeiling)).toFixed(2)}x |`);
    console.log(`| download | ${median(down).toFixed(0)} ms (${mbps(median(down))} MB/s) | ${median(downCeiling).toFixed(0)} ms (${mbps(median(downCeiling))} MB/s) | ${(median(down) / median(downCeiling)).toFixed(2)}x |`);
    console.log(`server resident memory per round (before → peak): ${memory.join(', ')}`);
    summary('files', { what: `upload of ${SIZE / MB} MB, median of ${ROUNDS}`, strongroom: median(up), ceiling: median(upCeiling), unit: 'ms', better: 'lower' });
    summary('files', { what: `download of ${SIZE / MB} MB, median of ${ROUNDS}`, strongroom: median(down), ceiling: median(downCeiling), unit: 'ms', better: 'lower' });

    const send = JSON.parse(
      await call(server.url, 'POST', '/api/sends', {
        token,
        json: { type: 0, name: encryptText('bench', account.userKey), key: ENC, deletionDate: new Date(Date.now() + 86_400_000).toISOString(), text: { text: ENC, hidden: false }, disabled: false },
      }),
    ) as { accessId: string };
    const r = await autocannon({ url: `${server.url}/api/sends/access/${send.accessId}`, method: 'POST', connections: 1000, duration: SECONDS, timeout: 30, headers: { 'content-type': 'application/json' }, body: '{}' });
    const counted = JSON.parse(await call(server.url, 'GET', '/api/sends', { token })) as { data: { accessCount: number }[] };
    console.log('\n1,000 concurrent anonymous Send accesses (POST /api/sends/access/{id}, each counted):');
    console.log('| connections | requests | mean ms | p50 | p90 | p99 | max | req/s | non-2xx | errors (timeouts) | access count |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    console.log(
      `| 1000 | ${r.requests.total} | ${r.latency.average.toFixed(1)} | ${r.latency.p50} | ${r.latency.p90} | ${r.latency.p99} | ${r.latency.max} | ${r.requests.average.toFixed(1)} | ${r.non2xx} | ${r.errors} (${r.timeouts}) | ${counted.data[0]?.accessCount ?? 0} |`,
    );
    summary('files', { what: '1,000 concurrent anonymous Send accesses', strongroom: r.requests.average, unit: 'req/s', better: 'higher' });
  } finally {
    await ceiling.stop();
    await server.stop();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
