/**
 * Where the time of one sync goes, in-process, without HTTP: loading the vault with the cache
 * off, after one item changed and unchanged, and writing the body.
 *   npx tsx bench/profile-sync.ts [items]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../src/shared/clock.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createSyncService } from '../src/features/vault/sync.service.js';
import { createSyncCache } from '../src/features/vault/sync-cache.js';
import { syncBody, syncBytes } from '../src/features/vault/sync.schemas.js';
import { touchVault } from '../src/features/vault/revisions.js';
import { rowChange } from '../src/features/vault/ciphers.repository.js';
import { CipherType } from '../src/features/vault/ciphers.schemas.js';
import { loadConfig } from '../src/config/config.js';
import { NO_CLIENT } from '../src/http/request-context.js';
import { createFeatures } from '../src/wiring.js';
import { makeTestAccount, registerFinishBody } from '../test/support/bw-crypto.js';
import { itemBody } from './items.js';

const items = Number(process.argv[2] ?? 10_000);
const url = process.env.BENCH_DATABASE_URL ?? `sqlite:${join(mkdtempSync(join(tmpdir(), 'sr-prof-')), 'db.sqlite')}`;
const database = openDatabase(url);
await migrateToLatest(database);
const account = makeTestAccount({ email: 'prof@example.com' });
// Registered as the server registers anyone; only the vault part is measured.
const features = await createFeatures({ config: loadConfig({ LOG_LEVEL: 'warn' }), database, clock: systemClock });
const registration = registerFinishBody(account) as Parameters<typeof features.accounts.registerFinish>[0];
const userId = (await features.accounts.registerFinish(registration)).id;
const caller = { userId, client: NO_CLIENT, log: pino({ level: 'silent' }) };
for (let start = 0; start < items; start += 5000) {
  const ciphers = Array.from({ length: Math.min(5000, items - start) }, (_, i) => itemBody(account, start + i));
  await features.cipherImport.import(caller, { folders: [], ciphers: ciphers as never, folderRelationships: [] });
}
const cold = createSyncService({ db: database.db, engine: database.engine, apiBase: 'http://bench/api', cache: createSyncCache(0) });
const warm = createSyncService({ db: database.db, engine: database.engine, apiBase: 'http://bench/api', cache: createSyncCache(256 * 1024 * 1024) });
await warm.load(caller, { newestType: CipherType.Passport });
const [changed] = await database.db.selectFrom('ciphers').select('id').where('user_id', '=', userId).limit(1).execute();
/** The result, and the wall and CPU (user + system) milliseconds it took: CPU time varies far less on a loaded machine. */
const time = async <T>(work: () => Promise<T>): Promise<[T, string]> => {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const result = await work();
  const used = process.cpuUsage(cpu);
  return [result, `${(performance.now() - t).toFixed(1)} ms (cpu ${((used.user + used.system) / 1000).toFixed(1)})`];
};
for (let round = 0; round < 8; round++) {
  const [data, load] = await time(() => cold.load(caller, { newestType: CipherType.Passport }));
  // One item changed, as an edit does (its version and the vault revision move).
  await database.db.updateTable('ciphers').set({ revision_date: new Date().toISOString(), ...rowChange }).where('id', '=', changed!.id).execute();
  await touchVault(database.db, userId, new Date().toISOString());
  const [, afterChange] = await time(() => warm.load(caller, { newestType: CipherType.Passport }));
  const [, unchanged] = await time(() => warm.load(caller, { newestType: CipherType.Passport }));
  const [bytes, body] = await time(async () => syncBytes(syncBody(data, { excludeDomains: true })));
  console.log(
    `cache off ${load}, after one change ${afterChange}, unchanged ${unchanged}, body ${body}, ${bytes.length} bytes`,
  );
}
await features.close();
await database.close();
