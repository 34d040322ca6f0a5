/**
 * `strongroom backup` of a running server while it writes, `strongroom restore` into a fresh
 * DATA_DIR, and the official `bw` client against the restored copy: it logs in and lists the
 * items written before the backup, decrypted.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, registerAccount, testAccount } from '../support/accounts.js';
import { createBwCli, type BwCli } from '../support/bw-cli.js';
import { encryptText } from '../support/bw-crypto.js';
import { freePort, killPrograms, startProgram, waitFor, type Program } from '../support/program.js';
import { httpRequest, startTestServer, type TestServer } from '../support/test-server.js';
import { createTestTls, type TestTls } from '../support/tls.js';
import { cipherBody } from '../support/vault.js';

const SLOW = 300_000;
let root: string;
let tls: TestTls;
let live: Program;
let liveUrl: string;
let restored: TestServer | undefined;
let bw: BwCli | undefined;

const ACCOUNT = { email: 'backup-e2e@example.com', name: 'Backup', derivation: 'real' as const };
const ATTACHMENT = 'attachments/0f0e/blob.bin';

/** The live server as the account helpers see one: requests to its base URL. */
const liveServer = () => ({ request: (method: string, path: string, options?: Parameters<typeof httpRequest>[3]) => httpRequest(liveUrl, method, path, options) }) as unknown as TestServer;

async function command(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const run = startProgram({ LOG_LEVEL: 'warn', ...env }, { args });
  const code = await run.exited;
  return { code, output: run.output() };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'strongroom-backup-'));
  tls = await createTestTls();
  const port = await freePort();
  await mkdir(join(root, 'live', 'attachments', '0f0e'), { recursive: true });
  await writeFile(join(root, 'live', ATTACHMENT), Buffer.from('encrypted attachment bytes'));
  live = startProgram({ DATA_DIR: join(root, 'live'), PORT: String(port), LOG_LEVEL: 'info', PASSWORD_ITERATIONS: '100000', MAX_CONNECTIONS_PER_IP: '0' });
  await waitFor(() => live.output().includes('Strongroom is ready'), 60_000);
  liveUrl = `http://127.0.0.1:${port}`;
}, SLOW);

afterAll(async () => {
  await bw?.dispose();
  await restored?.close();
  killPrograms();
  await rm(root, { recursive: true, force: true });
});

describe('backup and restore', () => {
  const acknowledgedBefore: string[] = [];
  const acknowledgedAll: string[] = [];
  let itemName = '';

  it('backs up a running server while it writes, consistently', async () => {
    const account = await registerAccount(liveServer(), ACCOUNT);
    const user = await loginAccount(liveServer(), account);
    itemName = 'written before the backup';
    const item = await httpRequest(liveUrl, 'POST', '/api/ciphers', { token: user.accessToken, json: cipherBody('login', account.userKey, { name: encryptText(itemName, account.userKey) }) });
    expect(item.status, item.text).toBe(200);

    // Folders are written one after another for the whole backup.
    let writing = true;
    let failures = 0;
    const writer = (async () => {
      let n = 0;
      while (writing) {
        const res = await httpRequest(liveUrl, 'POST', '/api/folders', { token: user.accessToken, json: { name: encryptText(`folder ${n++}`, account.userKey) } });
        if (res.status === 200) acknowledgedAll.push(res.body.id as string);
        else failures++;
      }
    })();
    await waitFor(() => acknowledgedAll.length >= 20, 60_000);
    acknowledgedBefore.push(...acknowledgedAll);
    const backup = await command(['backup', join(root, 'vault.tar.gz')], { DATA_DIR: join(root, 'live') });
    const countAtBackupEnd = acknowledgedAll.length;
    writing = false;
    await writer;

    expect(backup.code, backup.output).toBe(0);
    expect(backup.output).toMatch(/Backed up the SQLite database \(migration \d{4}-[a-z-]+\) and 1 files from /);
    expect(failures).toBe(0);
    // The server kept answering writes while the copy was taken.
    expect(countAtBackupEnd).toBeGreaterThan(acknowledgedBefore.length);
  }, SLOW);

  it('restores into a fresh DATA_DIR: the rows acknowledged before the backup and the files', async () => {
    const restore = await command(['restore', join(root, 'vault.tar.gz')], { DATA_DIR: join(root, 'restored') });
    expect(restore.code, restore.output).toBe(0);
    expect(restore.output).toContain('Restored the SQLite database');
    expect(await readFile(join(root, 'restored', ATTACHMENT), 'utf8')).toBe('encrypted attachment bytes');

    restored = await startTestServer({ tls, databaseUrl: `sqlite:${join(root, 'restored', 'strongroom.sqlite')}`, env: { DATA_DIR: join(root, 'restored') } });
    const account = registerAccountCached();
    const user = await loginAccount(restored, account);
    const sync = await restored.request('GET', '/api/sync', { token: user.accessToken });
    expect(sync.status).toBe(200);
    const folderIds = new Set((sync.body.folders as { id: string }[]).map((f) => f.id));
    for (const id of acknowledgedBefore) expect(folderIds.has(id), `folder ${id} acknowledged before the backup`).toBe(true);
    // Nothing in the copy that the live server never acknowledged.
    for (const id of folderIds) expect(acknowledgedAll).toContain(id);
    expect(sync.body.ciphers).toHaveLength(1);
  }, SLOW);

  it('serves the official bw client from the restored copy', async () => {
    if (!restored) throw new Error('no restored server');
    bw = await createBwCli({ serverUrl: restored.baseUrl, caPath: tls.caPath });
    await bw.configServer();
    const login = await bw.login(ACCOUNT.email, (registerAccountCached()).password);
    expect(login.code, login.stderr).toBe(0);
    const items = await bw.json<{ name: string }[]>(['list', 'items']);
    expect(items.map((i) => i.name)).toEqual([itemName]);
    const folders = await bw.json<{ name: string }[]>(['list', 'folders']);
    expect(folders.map((f) => f.name)).toContain('folder 0');
  }, SLOW);

  it('refuses to restore over an existing database without --force', async () => {
    const again = await command(['restore', join(root, 'vault.tar.gz')], { DATA_DIR: join(root, 'restored') });
    expect(again.code).toBe(2);
    expect(again.output).toContain(`a database exists at ${join(root, 'restored', 'strongroom.sqlite')}`);
  }, SLOW);
});

/** The same client-side account (the helpers cache it per email), without registering again. */
function registerAccountCached() {
  return testAccount(ACCOUNT.email, undefined, ACCOUNT.name, ACCOUNT.derivation);
}
