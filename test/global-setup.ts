import pg from 'pg';

/** Drops the per-server PostgreSQL schemas (`t_…`) of the run, once every worker is done. */
export async function teardown(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url?.startsWith('postgres')) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>("select nspname as name from pg_namespace where nspname ~ '^t_[0-9a-f]{12}$'");
    for (const { name } of rows) await client.query(`drop schema if exists ${name} cascade`);
  } finally {
    await client.end();
  }
}
