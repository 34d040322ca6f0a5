import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { TEST_ENGINE } from './test-server.js';

/**
 * Makes the database refuse every insert into `table` whose `column` is `value`, on either engine,
 * as a full disk would refuse a write halfway through a request's work. Answers what undoes it.
 */
export async function failInserts(db: Db, table: string, column: string, value: number): Promise<() => Promise<void>> {
  const name = `fail_${table}_${column}`;
  const [trigger, on, where] = [sql.raw(name), sql.raw(table), sql.raw(`new.${column} = ${Number(value)}`)];
  if (TEST_ENGINE === 'sqlite') {
    await sql`create trigger ${trigger} before insert on ${on} when ${where} begin select raise(abort, 'refused'); end`.execute(db);
    return async () => void (await sql`drop trigger ${trigger}`.execute(db));
  }
  await sql`create function ${trigger}() returns trigger language plpgsql as $$ begin if ${where} then raise exception 'refused'; end if; return new; end $$`.execute(db);
  await sql`create trigger ${trigger} before insert on ${on} for each row execute function ${trigger}()`.execute(db);
  return async () => {
    await sql`drop trigger ${trigger} on ${on}`.execute(db);
    await sql`drop function ${trigger}()`.execute(db);
  };
}
