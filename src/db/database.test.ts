import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';

const dir = mkdtempSync(join(tmpdir(), 'sr-database-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** SQLite's page cache of a database opened with `options`, as the pragma reports it (negative: KiB). */
async function cacheSize(options: Parameters<typeof openDatabase>[1]): Promise<number> {
  const database = openDatabase(`sqlite:${join(dir, 'db.sqlite')}`, options);
  try {
    const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(database.db);
    return rows[0]!.cache_size;
  } finally {
    await database.close();
  }
}

describe('openDatabase on SQLite', () => {
  it("keeps 2 MB of pages unless told (SQLite's own default, not better-sqlite3's 16 MB)", async () => {
    expect(await cacheSize({})).toBe(-2048);
  });

  it('keeps SQLITE_CACHE_MEGABYTES of pages', async () => {
    expect(await cacheSize({ sqliteCacheMegabytes: 24 })).toBe(-24 * 1024);
  });
});
