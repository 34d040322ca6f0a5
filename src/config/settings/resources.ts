import { Type } from 'typebox';

/** What the server spends memory and disk on: database tuning, caches, and how long audit events are kept. */
export const resourceSettings = {
  sqliteSynchronous: Type.Union([Type.Literal('normal'), Type.Literal('full')], {
    default: 'normal',
    description:
      "SQLite only. 'normal': a commit survives a crash of the server process (kill -9 included) but the last commits before a power loss or operating-system crash may be lost; about 0.1 ms a commit. 'full': every commit is synced to disk and survives a power loss too, at the disk's sync cost (about 7 ms a commit on our test machines), which caps writes at a few hundred a second.",
  }),
  sqliteCacheMegabytes: Type.Integer({
    minimum: 1,
    maximum: 65536,
    default: 2,
    description:
      "SQLite only. Megabytes of database pages the server keeps in memory; reads beyond them come from the operating system's file cache. The memory stays with the process once filled (reading a large vault once fills it), so more costs memory for good and measured no faster on our test machines.",
  }),
  postgresPreparedStatements: Type.Boolean({
    default: true,
    description:
      'PostgreSQL only. Prepare the statements the server sends again and again (those with parameters that name their columns, up to 200 a connection), so that PostgreSQL does not parse and plan them on every request (about a fifth less of its CPU on an item write). Turn off when a connection pooler in transaction mode sits in front of PostgreSQL and does not carry prepared statements between its connections (PgBouncer before 1.21, or later ones without max_prepared_statements).',
  }),
  syncCacheMegabytes: Type.Integer({
    minimum: 0,
    maximum: 65536,
    default: 64,
    description:
      "Memory for sync's encoded items: half for whole vault sections, reused while a vault is unchanged and patched with only the changed items after a change; half for the shared part of each item of vaults with organization collections (kept under its version, so that after a change only the changed items are read again). 0 turns both off: every sync reads and encodes every item. A 10,000-item vault takes about 20 MB.",
  }),
  cacheIdleMinutes: Type.Integer({
    minimum: 0,
    maximum: 1440,
    default: 5,
    description:
      "Minutes after which what the sync and Secrets Manager caches hold for nobody is dropped and its memory given back: an entry goes between this and twice this after its last use, and the next request builds it again (a 10,000-item vault's next sync then reads every item, about 0.1-0.2 s). 0 keeps entries until their cache's budget pushes them out.",
  }),
  secretsCacheMegabytes: Type.Integer({
    minimum: 0,
    maximum: 65536,
    default: 64,
    description:
      "Memory for encoded Secrets Manager answers (listings, machine syncs, get-by-ids), reused while an organization's secrets and projects are unchanged (0 turns it off). 10,000 secrets listed take about 5 MB.",
  }),
  eventRetentionDays: Type.Integer({
    minimum: 0,
    maximum: 36500,
    default: 0,
    description:
      'Days audit events are kept; older ones are deleted in the background, hourly, by one instance of the fleet at a time. 0 keeps them forever.',
  }),
};
