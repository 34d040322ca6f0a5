/**
 * The next release's first instance and then a second one migrating the database at argv[2], in
 * a process of their own, as two instances of a release would: prints what each applied (a JSON
 * array of migrateToLatest's two reports).
 */
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { nextRelease } from './next-release.js';

const database = openDatabase(process.argv[2] ?? '', { poolSize: 2 });
try {
  const first = await migrateToLatest(database, { migrations: nextRelease(database.engine) });
  const second = await migrateToLatest(database, { migrations: nextRelease(database.engine) });
  process.stdout.write(JSON.stringify([first, second]));
} finally {
  await database.close();
}
