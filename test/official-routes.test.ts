/**
 * Every route the official web vault and shared client libraries call (listed in
 * test/support/official-client-routes.json, read from bitwarden/clients by
 * scripts/official-client-routes.ts) is served, or named in UNSERVED with the issue that will
 * serve it. A new client route Strongroom does not serve fails here, and so does an UNSERVED entry
 * that is now served or no longer called, so the list only shrinks.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_ROUTES_ENV, openApiDocument, operationsOf } from './support/openapi.js';
import { startTestServer, type TestServer } from './support/test-server.js';
import { UNSERVED } from './official-routes.unserved.js';

interface OfficialRoute {
  route: string;
  source: string;
  commit: string;
}

const OFFICIAL = (JSON.parse(readFileSync(new URL('support/official-client-routes.json', import.meta.url), 'utf8')) as { routes: OfficialRoute[] }).routes;

/** `GET /api/organizations/{orgId}/users` -> `GET /api/organizations/{}/users`: parameters unnamed, case folded. */
const shapeOf = (route: string) => route.replace(/\{[^}]*\}/g, '{}').toLowerCase();

let server: TestServer;
let served: Set<string>;
beforeAll(async () => {
  server = await startTestServer({ env: ALL_ROUTES_ENV });
  served = new Set(operationsOf(await openApiDocument(server)).map((o) => shapeOf(o.name)));
});
afterAll(async () => {
  await server?.close();
});

describe('the routes the official clients call', () => {
  it('reads a list of routes from the clients source', () => {
    expect(OFFICIAL.length).toBeGreaterThan(250);
    for (const r of OFFICIAL) expect(r.route).toMatch(/^(GET|POST|PUT|DELETE|PATCH) \/(api|identity|events|icons|notifications)\//);
  });

  it('serves every one, except those UNSERVED names with a reason', () => {
    const missing = OFFICIAL.filter((r) => !served.has(shapeOf(r.route)) && !(r.route in UNSERVED)).map((r) => `${r.route}  (${r.source})`);
    expect(missing, 'client routes neither served nor in UNSERVED (test/official-routes.unserved.ts)').toEqual([]);
  });

  it('keeps no UNSERVED entry that is now served or no longer called', () => {
    const called = new Set(OFFICIAL.map((r) => r.route));
    const stale = Object.keys(UNSERVED).filter((route) => served.has(shapeOf(route)) || !called.has(route));
    expect(stale, 'remove these from UNSERVED').toEqual([]);
  });

  it('gives every UNSERVED entry a reason naming what will serve it', () => {
    for (const [route, reason] of Object.entries(UNSERVED)) expect(reason, route).toMatch(/#\d+|not offered/);
  });
});
