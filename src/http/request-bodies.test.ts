import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type LoggedInUser } from '../../test/support/accounts.js';
import { startTestServer, type TestServer } from '../../test/support/test-server.js';
import { cipherBody } from '../../test/support/vault.js';
import type { BadRequest } from './errors.js';
import { checkJsonShape, MAX_JSON_DEPTH, MAX_JSON_ENTRIES } from './request-bodies.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('checkJsonShape', () => {
  it('lets through JSON within the bounds, brackets and commas inside strings not counted', () => {
    expect(() => checkJsonShape(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => checkJsonShape(`{"a":"${'[{,'.repeat(200_000)}","b":"\\"[[["}`)).not.toThrow();
    expect(() => checkJsonShape(`[${Array(MAX_JSON_ENTRIES).fill(0).join(',')}]`)).not.toThrow();
  });

  it('refuses nesting past the depth and a container past the entries, naming which', () => {
    const refusal = (text: string) => {
      try {
        checkJsonShape(text);
        return null;
      } catch (error) {
        return (error as BadRequest).validationErrors?.['']?.[0];
      }
    };
    expect(refusal(nested(MAX_JSON_DEPTH + 1))).toBe(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    expect(refusal(`{"a":${nested(MAX_JSON_DEPTH)}}`)).toBe(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    expect(refusal(`[${Array(MAX_JSON_ENTRIES + 1).fill(0).join(',')}]`)).toBe(`An array or object in the JSON body has more than ${MAX_JSON_ENTRIES} entries.`);
  });
});

describe('request bodies', () => {
  let server: TestServer;
  let alice: LoggedInUser;
  beforeAll(async () => {
    server = await startTestServer();
    alice = await createUser(server, { email: 'alice@example.com' });
  });
  afterAll(async () => server?.close());

  const post = (path: string, body: string, token?: string) =>
    server.request('POST', path, { body, headers: { 'content-type': 'application/json' }, ...(token ? { token } : {}) });

  const ANONYMOUS = [
    '/identity/accounts/register/finish',
    '/api/auth-requests',
    '/api/sends/access/aBcDeFgHiJkLmNoPqRsTuV',
    '/api/accounts/password-hint',
    '/api/two-factor/recover',
    '/identity/accounts/prelogin',
  ];

  it.each(ANONYMOUS)('refuses a body over the anonymous limit on %s before reading it', async (path) => {
    const big = JSON.stringify({ email: 'a'.repeat(server.config.anonymousBodyLimitBytes) });
    const res = await post(path, big);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('The request body is too large.');
  });

  it('refuses a JSON bomb on an anonymous route from its declared length, without reading it', async () => {
    const { hostname, port } = new URL(server.baseUrl);
    const socket = connect({ host: hostname, port: Number(port) });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // 16 MB declared; only its first bytes are ever sent.
    socket.write(`POST /api/auth-requests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${16 * 1024 * 1024}\r\n\r\n${'['.repeat(1000)}`);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 3000))]);
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('The request body is too large.');
  });

  it('refuses nesting past the bound with a 400 naming it, on anonymous and large routes alike', async () => {
    for (const [path, token] of [
      ['/api/accounts/password-hint', undefined],
      ['/api/ciphers/import', alice.accessToken],
    ] as const) {
      const res = await post(path, nested(10_000), token);
      expect(res.status, path).toBe(400);
      expect(res.body.validationErrors[''][0]).toBe(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    }
  });

  it('refuses a container of more entries than any route takes, before parsing it', async () => {
    const res = await post('/api/ciphers/import', `{"ciphers":[${Array(MAX_JSON_ENTRIES + 1).fill(1).join(',')}]}`, alice.accessToken);
    expect(res.status).toBe(400);
    expect(res.body.validationErrors[''][0]).toBe(`An array or object in the JSON body has more than ${MAX_JSON_ENTRIES} entries.`);
  });

  it('takes bodies up to the authenticated limit on routes that need a token, and large ones only where declared', async () => {
    const item = cipherBody('secureNote', alice.account.userKey);
    const created = await server.request('POST', '/api/ciphers', { token: alice.accessToken, json: item });
    expect(created.status, created.text).toBe(200);
    // Over 1 MiB: too large for an item, fine for an import.
    const padded = JSON.stringify({ ...item, padding: 'x'.repeat(server.config.authenticatedBodyLimitBytes) });
    const tooLarge = await post(`/api/ciphers/${created.body.id}`, padded, alice.accessToken);
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.message).toBe('The request body is too large.');
    const many = Array.from({ length: 900 }, () => item);
    const body = JSON.stringify({ folders: [], ciphers: many, folderRelationships: [] });
    expect(body.length).toBeGreaterThan(server.config.authenticatedBodyLimitBytes);
    const imported = await post('/api/ciphers/import', body, alice.accessToken);
    expect(imported.status, imported.text).toBe(200);
  });

  it('reads an empty body with a JSON content type as no body', async () => {
    const created = await server.request('POST', '/api/ciphers', { token: alice.accessToken, json: cipherBody('login', alice.account.userKey) });
    const res = await server.request('PUT', `/api/ciphers/${created.body.id}/delete`, { token: alice.accessToken, body: ' \n', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
  });
});
