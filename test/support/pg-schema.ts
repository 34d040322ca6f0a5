import pg from 'pg';

/** Creates `schema` in the PostgreSQL database of `connectionString`; answers a URL whose connections use it. */
export async function createSchema(connectionString: string, schema: string): Promise<string> {
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(connectionString);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** Drops `schema` and everything in it from the PostgreSQL database of `connectionString`. */
export async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await admin.end();
  }
}
