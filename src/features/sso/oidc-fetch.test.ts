import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOidcFetch } from './oidc-fetch.js';

/** The SSO login's calls to identity providers: the address guard, plain http, the time limit, the size limit. */

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/slow') return; // never answers
    if (req.url === '/big') return void res.end(Buffer.alloc(2 * 1024 * 1024, 'a'));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, method: req.method }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('calls to an identity provider', () => {
  it('refuses loopback and plain http unless SSO_ALLOW_PRIVATE_ADDRESSES is on', async () => {
    const guarded = createOidcFetch({ allowPrivateAddresses: false, timeoutMs: 2000 });
    await expect(guarded(`${base}/x`, { method: 'GET', headers: {} })).rejects.toThrow(/SSO_ALLOW_PRIVATE_ADDRESSES/);
    await expect(guarded('https://127.0.0.1:9/x', { method: 'GET', headers: {} })).rejects.toThrow(/private, loopback/);
    guarded.close();
    const open = createOidcFetch({ allowPrivateAddresses: true, timeoutMs: 2000 });
    const answer = await open(`${base}/x`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ a: 'b' }) });
    expect(await answer.json()).toEqual({ ok: true, method: 'POST' });
    open.close();
  });

  it('gives up on an IdP that does not answer in time or answers too much', async () => {
    const open = createOidcFetch({ allowPrivateAddresses: true, timeoutMs: 500 });
    await expect(open(`${base}/slow`, { method: 'GET', headers: {} })).rejects.toThrow(/did not answer within 500 ms/);
    await expect(open(`${base}/big`, { method: 'GET', headers: {} })).rejects.toThrow(/more than/);
    open.close();
  });
});
