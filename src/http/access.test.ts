import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { access, enforceAccessRules, type Authenticator, type Principal } from './access.js';
import { apiErrorHandler } from './error-handler.js';

const user: Principal = {
  kind: 'user',
  userId: 'u1',
  email: 'a@example.com',
  securityStamp: 's',
  deviceIdentifier: null,
  clientId: 'cli',
  scopes: ['api', 'offline_access'],
  amr: ['Application'],
};
const org: Principal = { kind: 'organization', organizationId: 'o1', clientId: 'organization.o1', scopes: ['api.organization'] };

const authenticate: Authenticator = async (token) => ({ 'user-token': user, 'org-token': org })[token] ?? null;
const ok = { response: { 200: Type.Object({ ok: Type.Boolean() }) } };

function appWith(register: (app: FastifyInstance) => void) {
  const app = Fastify();
  app.decorateRequest('principal', null);
  app.setErrorHandler(apiErrorHandler);
  enforceAccessRules(app, authenticate);
  register(app);
  return app;
}

describe('declared access rules', () => {
  it('refuses to start when a route declares no access rule', async () => {
    expect(() => appWith((a) => a.get('/open', { schema: ok }, async () => ({ ok: true })))).toThrow(/declares no access rule/);
  });

  it('refuses to start when a route declares no response schema', async () => {
    expect(() => appWith((a) => a.get('/open', { config: { access: access.anonymous } }, async () => ({ ok: true })))).toThrow(
      /no response schema/,
    );
  });

  it('also guards routes of plugins registered below the service', async () => {
    const app = appWith((a) => {
      void a.register(async (child) => {
        child.get('/nested', { schema: ok }, async () => ({ ok: true }));
      });
    });
    await expect(app.ready()).rejects.toThrow(/GET \/nested declares no access rule/);
  });

  it('admits anonymous callers only on anonymous routes', async () => {
    const app = appWith((a) => {
      a.get('/anon', { config: { access: access.anonymous }, schema: ok }, async () => ({ ok: true }));
      a.get('/mine', { config: { access: access.user }, schema: ok }, async () => ({ ok: true }));
    });
    expect((await app.inject('/anon')).statusCode).toBe(200);
    const refused = await app.inject('/mine');
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ object: 'error', message: 'Unauthorized.' });
  });

  it('reads the bearer token and checks the principal kind and scope', async () => {
    const app = appWith((a) => {
      a.get('/mine', { config: { access: access.user }, schema: ok }, async (request) => ({ ok: request.principal?.kind === 'user' }));
      a.get('/org', { config: { access: access.organizationApiKey }, schema: ok }, async () => ({ ok: true }));
    });
    const mine = await app.inject({ url: '/mine', headers: { authorization: 'Bearer user-token' } });
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toEqual({ ok: true });
    expect((await app.inject({ url: '/mine', headers: { authorization: 'bearer user-token' } })).statusCode).toBe(200);
    expect((await app.inject({ url: '/mine', headers: { authorization: 'Bearer org-token' } })).statusCode).toBe(401);
    expect((await app.inject({ url: '/mine', headers: { authorization: 'Basic user-token' } })).statusCode).toBe(401);
    expect((await app.inject({ url: '/mine', headers: { authorization: 'Bearer forged' } })).statusCode).toBe(401);
    expect((await app.inject({ url: '/org', headers: { authorization: 'Bearer org-token' } })).statusCode).toBe(200);
    expect((await app.inject({ url: '/org', headers: { authorization: 'Bearer user-token' } })).statusCode).toBe(401);
  });

  it('runs a rule-specific authorization after authentication', async () => {
    const rule = {
      name: 'onlyU2',
      principals: ['user'] as const,
      authorize: (_request: unknown, p: Principal) => {
        if (p.kind !== 'user' || p.userId !== 'u2') throw Object.assign(new Error('nope'), { statusCode: 403 });
      },
    };
    const app = appWith((a) => a.get('/x', { config: { access: rule }, schema: ok }, async () => ({ ok: true })));
    expect((await app.inject({ url: '/x', headers: { authorization: 'Bearer user-token' } })).statusCode).toBe(403);
  });
});
