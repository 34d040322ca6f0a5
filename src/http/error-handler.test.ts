import Fastify from 'fastify';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { BadRequest, NotFound } from './errors.js';
import { apiErrorHandler, frameworkErrorHandler, identityErrorHandler, OAuthError, publicErrorHandler } from './error-handler.js';
import { Guid } from './schemas.js';
import { validatorCompiler } from './validation.js';

const Body = Type.Object({
  name: Type.String(),
  favorite: Type.Optional(Type.Boolean()),
  ids: Type.Optional(Type.Array(Guid, { maxItems: 3 })),
  login: Type.Optional(Type.Object({ uris: Type.Array(Type.Object({ uri: Type.String() })) })),
});

function app(handler = apiErrorHandler) {
  const a = Fastify({ bodyLimit: 1024 });
  a.setValidatorCompiler(validatorCompiler);
  a.setErrorHandler(handler);
  a.post('/items/:id', { schema: { params: Type.Object({ id: Guid }), body: Body } }, async () => ({ ok: true }));
  a.get('/list', { schema: { querystring: Type.Object({ includeGroups: Type.Boolean({ default: false }) }) } }, async (r) => r.query);
  a.get('/missing', async () => {
    throw new NotFound();
  });
  a.get('/bad', async () => {
    throw BadRequest.field('email', 'The email is already taken.');
  });
  a.get('/boom', async () => {
    throw new Error('database password is hunter2');
  });
  a.get('/oauth', async () => {
    throw new OAuthError('invalid_grant', 'invalid_username_or_password', 'Username or password is incorrect. Try again.');
  });
  return a;
}

const id = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';
const post = (body: string, url = `/items/${id}`) =>
  app().inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: body });

describe('API error envelope', () => {
  it('answers malformed JSON with 400 and the Bitwarden error model', async () => {
    const res = await post('{"name": ');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ object: 'error', message: 'The request body is not valid JSON.' });
  });

  it('names the field of a wrong type, a missing field and a nested field', async () => {
    const res = await post(JSON.stringify({ favorite: 'yes', login: { uris: [{ uri: 5 }] } }));
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.message).toBe('The model state is invalid.');
    expect(body.validationErrors).toMatchObject({
      name: ['The name field is required.'],
      favorite: ['The favorite field must be of type boolean.'],
      'login.uris[0].uri': ['The login.uris[0].uri field must be of type string.'],
    });
  });

  it('rejects invalid GUIDs in the path and in the body, naming them', async () => {
    const inPath = await post(JSON.stringify({ name: 'x' }), '/items/42');
    expect(inPath.statusCode).toBe(400);
    expect(inPath.json().validationErrors).toEqual({ id: ['The id field must be a GUID.'] });
    const inBody = await post(JSON.stringify({ name: 'x', ids: ['not-a-guid'] }));
    expect(inBody.json().validationErrors).toEqual({ 'ids[0]': ['The ids[0] field must be a GUID.'] });
  });

  it('names array limits', async () => {
    const res = await post(JSON.stringify({ name: 'x', ids: [id, id, id, id] }));
    expect(res.json().validationErrors).toEqual({ ids: ['The ids field must contain at most 3 items.'] });
  });

  it('answers an oversize body with 400, not 500', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(5000) }));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('too large');
  });

  it('answers a missing body with 400', async () => {
    const res = await app().inject({ method: 'POST', url: `/items/${id}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().object).toBe('error');
  });

  it('coerces query-string booleans but not body types', async () => {
    const res = await app().inject({ url: '/list?includeGroups=true' });
    expect(res.json()).toEqual({ includeGroups: true });
    expect((await app().inject({ url: '/list?includeGroups=maybe' })).statusCode).toBe(400);
  });

  it('maps service errors to their status', async () => {
    expect((await app().inject('/missing')).json()).toMatchObject({ message: 'Resource not found.', object: 'error' });
    const bad = await app().inject('/bad');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().validationErrors).toEqual({ email: ['The email is already taken.'] });
  });

  it('hides internal detail of unknown errors behind a 500', async () => {
    const res = await app().inject('/boom');
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('hunter2');
    expect(res.json().message).toBe('An unhandled server error has occurred.');
  });
});

describe('public API error envelope', () => {
  it('has object, message and validationErrors only', async () => {
    const res = await app(publicErrorHandler).inject({ method: 'POST', url: `/items/${id}`, headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ object: 'error', message: 'The model state is invalid.', validationErrors: { name: ['The name field is required.'] } });
  });
});

describe('identity error envelope', () => {
  it('answers OAuth errors with error, error_description and the ErrorModel clients read', async () => {
    const res = await app(identityErrorHandler).inject('/oauth');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'invalid_username_or_password',
      ErrorModel: { Message: 'Username or password is incorrect. Try again.', Object: 'error' },
    });
  });
});

describe('frameworkErrorHandler (the frameworkErrors server option)', () => {
  it('answers a path that is not valid UTF-8 with the API envelope, naming the problem', async () => {
    const a = Fastify({ frameworkErrors: frameworkErrorHandler });
    a.get('/items/:id', async () => ({ ok: true }));
    const res = await a.inject({ method: 'GET', url: '/items/%ED%A0%80' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ object: 'error', message: 'The request path is not a valid URL.', validationErrors: { '': [expect.stringContaining('UTF-8')] }, exceptionMessage: null });
  });
});
