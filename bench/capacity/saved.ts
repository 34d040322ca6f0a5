/**
 * A seeded population kept between runs (BENCH_KEEP_DIR): seeding 10,000 people writes about six
 * million items and takes minutes, so a run can measure again on the same data. The database is
 * a SQLite file in the folder or a PostgreSQL schema named for the population, and beside it a
 * JSON file of what the generator needs (ids, keys, credentials); tokens are not kept but taken
 * again, as clients log in again after a restart.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Client } from './client.js';
import { inParallel, personLogin, type Organization, type Person, type Population } from './population.js';

interface SavedPerson extends Omit<Person, 'org' | 'token' | 'refreshToken' | 'refreshing' | 'written'> {
  org: number;
}
interface Saved {
  people: SavedPerson[];
  organizations: (Omit<Organization, 'members' | 'ownerToken' | 'apiToken'> & { owner: number })[];
  account: Population['account'];
  fullCostLogins: Population['fullCostLogins'];
  items: number;
}

/** Where a kept population of `people` on `engine` lives: its database URL and its JSON file. */
export async function keptDatabase(dir: string, engine: string, people: number, postgresUrl: string | undefined): Promise<{ url: string; file: string; exists: boolean }> {
  const file = join(dir, `${engine}-${people}.json`);
  if (engine === 'sqlite') return { url: `sqlite:${join(dir, `${engine}-${people}.sqlite`)}`, file, exists: existsSync(file) };
  if (!postgresUrl) throw new Error('BENCH_POSTGRES_URL is not set');
  const schema = `capacity_${people}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    await admin.query(`create schema if not exists ${schema}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), file, exists: existsSync(file) };
}

/** Buffers (keys) survive the round trip through JSON. */
const revive = (_key: string, value: unknown) =>
  value && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer' && Array.isArray((value as { data?: unknown }).data) ? Buffer.from((value as { data: number[] }).data) : value;

export function savePopulation(file: string, population: Population): void {
  const orgIndex = new Map(population.organizations.map((org, i) => [org, i]));
  const saved: Saved = {
    people: population.people.map(({ org, token: _t, refreshToken: _r, refreshing: _f, written: _w, ...rest }) => ({ ...rest, org: orgIndex.get(org)! })),
    organizations: population.organizations.map(({ members, ownerToken: _o, apiToken: _a, ...rest }) => ({ ...rest, owner: members[0]!.index, machines: rest.machines.map((m) => ({ ...m, token: '' })) })),
    account: population.account,
    fullCostLogins: population.fullCostLogins,
    items: population.items,
  };
  writeFileSync(file, JSON.stringify(saved));
}

/** The kept population, everyone logged in again (people, machines, the organizations' API keys). */
export async function loadPopulation(file: string, client: Client, log: (line: string) => void): Promise<Population> {
  const saved = JSON.parse(readFileSync(file, 'utf8'), revive) as Saved;
  const logIn = personLogin(client, saved.account);
  const organizations: Organization[] = saved.organizations.map(({ owner: _owner, ...rest }) => ({ ...rest, ownerToken: '', apiToken: '', members: [] }));
  const people: Person[] = saved.people.map(({ org, ...rest }) => ({ ...rest, org: organizations[org]!, token: '', refreshToken: '', refreshing: false, written: [] }));
  for (const person of people) person.org.members.push(person);
  await inParallel(people, 8, logIn);
  for (const org of organizations) {
    org.ownerToken = org.members[0]!.token;
    org.apiToken = (
      await client.send<{ access_token: string }>('POST', '/identity/connect/token', {
        form: { grant_type: 'client_credentials', scope: 'api.organization', client_id: `organization.${org.id}`, client_secret: org.apiKey },
      })
    ).access_token;
    for (const machine of org.machines) machine.token = (await client.send<{ access_token: string }>('POST', '/identity/connect/token', { form: machine.form })).access_token;
  }
  log(`kept population of ${people.length} people loaded and logged in again`);
  return { people, organizations, machines: organizations.flatMap((o) => o.machines), account: saved.account, fullCostLogins: saved.fullCostLogins, items: saved.items };
}
