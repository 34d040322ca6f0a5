import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { SERVER_VERSION } from './server-config.routes.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The release as package.json names it, read here from the file itself rather than through the code under test. */
const packageVersion = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('the versions the server states', () => {
  it('agree with package.json: /api/config server.version and the OpenAPI info.version; config.version stays the Bitwarden one', async () => {
    server = await startTestServer({ env: { API_DOCS_ENABLED: 'true' } });
    const config = await server.request('GET', '/api/config');
    expect(config.status).toBe(200);
    expect(config.body.version).toBe(SERVER_VERSION);
    expect(SERVER_VERSION).toMatch(/^20\d\d\.\d+\.\d+$/);
    expect(config.body.server).toEqual({ name: 'Strongroom', url: server.config.publicUrl, version: packageVersion });
    const docs = await server.request('GET', '/docs/json');
    expect(docs.status).toBe(200);
    expect(docs.body.info.version).toBe(packageVersion);
  });
});

describe('how the browser extension is told of changes (push)', () => {
  it('advertises Web Push with the VAPID public key the database keeps, the same on every read', async () => {
    server = await startTestServer();
    const res = await server.request('GET', '/api/config');
    expect(res.status).toBe(200);
    const row = await server.database.db.selectFrom('web_push_keys').select('public_key').executeTakeFirstOrThrow();
    expect(res.body.push).toEqual({ pushTechnology: 1, vapidPublicKey: row.public_key });
    expect(Buffer.from(row.public_key, 'base64url')).toHaveLength(65);
    expect((await server.request('GET', '/api/config')).body.push.vapidPublicKey).toBe(row.public_key);
  });

  it('advertises the hub only when Web Push is off (WEB_PUSH_ENABLED=false), and makes no key', async () => {
    server = await startTestServer({ env: { WEB_PUSH_ENABLED: 'false' } });
    expect((await server.request('GET', '/api/config')).body.push).toEqual({ pushTechnology: 0, vapidPublicKey: null });
    expect(await server.database.db.selectFrom('web_push_keys').selectAll().execute()).toEqual([]);
  });

  it('advertises the hub only, and says why in the log, when the key cannot be read', async () => {
    server = await startTestServer();
    // A database the key cannot be read from.
    await server.database.db.schema.dropTable('web_push_keys').execute();
    const res = await server.request('GET', '/api/config');
    expect(res.status).toBe(200);
    expect(res.body.push).toEqual({ pushTechnology: 0, vapidPublicKey: null });
    expect(server.logs.text()).toMatch(/VAPID key could not be read/);
  });
});
