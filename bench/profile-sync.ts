/**
 * Where the time of one sync goes, in-process, without HTTP: loading the vault (cold, and
 * from the cache) and writing the body.
 *   npx tsx bench/profile-sync.ts [items]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../src/clock.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createAuditLog } from '../src/features/events/audit-log.js';
import { createCipherImport } from '../src/features/vault/cipher-import.js';
import { createSyncService } from '../src/features/vault/sync.service.js';
import { createSyncCache } from '../src/features/vault/sync-cache.js';
import { syncBody } from '../src/features/vault/sync.schemas.js';
import { encryptText, makeTestAccount } from '../test/support/bw-crypto.js';
import { cipherBody } from '../test/support/vault.js';

const items = Number(process.argv[2] ?? 10_000);
const url = process.env.BENCH_DATABASE_URL ?? `sqlite:${join(mkdtempSync(join(tmpdir(), 'sr-prof-')), 'db.sqlite')}`;
const database = openDatabase(url);
await migrateToLatest(database);
const account = makeTestAccount({ email: 'prof@example.com' });
const userId = crypto.randomUUID();
const now = new Date().toISOString();
await database.db
  .insertInto('users')
  .values({
    id: userId,
    email: `${userId}@example.com`,
    name: null,
    email_verified: true,
    master_password_hash: 'x',
    master_password_hint: null,
    master_password_salt: null,
    key: account.encryptedUserKey,
    public_key: null,
    private_key: null,
    kdf: 0,
    kdf_iterations: 600000,
    kdf_memory: null,
    kdf_parallelism: null,
    security_stamp: 's',
    api_key: 'k',
    user_key_id: null,
    premium: true,
    culture: 'en-US',
    avatar_color: null,
    equivalent_domains: null,
    excluded_global_equivalent_domains: null,
    force_password_reset: false,
    verify_devices: true,
    creation_date: now,
    revision_date: now,
    account_revision_date: now,
    last_password_change_date: null,
  })
  .execute();
const importer = createCipherImport({ db: database.db, audit: createAuditLog({ clock: systemClock }), clock: systemClock });
const client = { ipAddress: null, deviceType: null, deviceIdentifier: null, clientVersion: null };
for (let start = 0; start < items; start += 5000) {
  const ciphers = Array.from({ length: Math.min(5000, items - start) }, (_, i) =>
    (start + i) % 5 === 0
      ? cipherBody('login', account.userKey)
      : { type: 1, name: encryptText(`Site ${i}`, account.userKey), login: { username: encryptText('u', account.userKey), password: encryptText('p', account.userKey), uris: [{ uri: encryptText('https://x.example.com', account.userKey), match: null }] } },
  );
  await importer.import(userId, client, { folders: [], ciphers: ciphers as never, folderRelationships: [] });
}
const cold = createSyncService({ db: database.db, cache: createSyncCache(0) });
const warm = createSyncService({ db: database.db, cache: createSyncCache(256 * 1024 * 1024) });
for (let round = 0; round < 8; round++) {
  let t = performance.now();
  const data = await cold.load(userId, { withSshKeys: true });
  const load = performance.now() - t;
  t = performance.now();
  await warm.load(userId, { withSshKeys: true });
  const cached = performance.now() - t;
  t = performance.now();
  const bytes = Buffer.concat(syncBody(data, { excludeDomains: true }));
  const body = performance.now() - t;
  console.log(`cold load ${load.toFixed(1)} ms, warm load ${cached.toFixed(1)} ms, body ${body.toFixed(1)} ms, ${bytes.length} bytes`);
}
await database.close();
