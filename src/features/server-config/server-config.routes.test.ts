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
