import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { FEATURE_FLAGS } from './feature-flags.js';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

/** The table of docs/feature-flags.md: flag key to its stated state. */
function documentedFlags(): Map<string, string> {
  const rows = [...read('docs/feature-flags.md').matchAll(/^\| `([^`]+)` \| (on|off) \|/gm)];
  return new Map(rows.map((row) => [row[1] ?? '', row[2] ?? '']));
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

describe('feature flags', () => {
  it('/api/config sends exactly the flags of the table that are on, as booleans', async () => {
    const config = await server.request('GET', '/api/config');
    expect(config.status).toBe(200);
    const on = FEATURE_FLAGS.filter((flag) => flag.on).map((flag) => flag.key);
    expect(Object.keys(config.body.featureStates).sort()).toEqual(on.sort());
    for (const value of Object.values(config.body.featureStates)) expect(value).toBe(true);
  });

  it('docs/feature-flags.md lists every flag of the table, once, in its state', () => {
    const keys = FEATURE_FLAGS.map((flag) => flag.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(documentedFlags()).toEqual(new Map(FEATURE_FLAGS.map((flag) => [flag.key, flag.on ? 'on' : 'off'])));
  });

  it('keeps off the flags whose routes are not served, and the statements that say so true', () => {
    const unserved = read('test/official-routes.unserved.ts');
    const named = [...unserved.matchAll(/flag \(\\?"([a-z0-9-]+)\\?"\)/g)].map((match) => match[1]);
    expect(named.length).toBeGreaterThan(0);
    for (const key of named) expect(FEATURE_FLAGS.find((flag) => flag.key === key), key).toMatchObject({ on: false });
    // Those statements say /config sends no flags at all; with any flag on they must say "none of these flags".
    if (FEATURE_FLAGS.some((flag) => flag.on)) expect(unserved).not.toMatch(/sends no (feature )?flags/);
  });

  it('never forces clients onto version-2 keys, which would shut out clients older than 2025.11', () => {
    expect(FEATURE_FLAGS.find((flag) => flag.key === 'force-upgrade-v2-encryption')).toMatchObject({ on: false });
  });
});
