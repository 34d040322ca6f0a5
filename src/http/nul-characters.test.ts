import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { apiErrorHandler } from './error-handler.js';
import { refuseNulCharacters } from './nul-characters.js';

/** A bare app whose handler records that it ran: a refused request must never reach it. */
function app() {
  const reached: string[] = [];
  const a = Fastify();
  a.setErrorHandler(apiErrorHandler);
  refuseNulCharacters(a);
  a.post('/items/:id', async (request) => {
    reached.push(request.url);
    return { ok: true };
  });
  return { a, reached };
}

async function call(url: string, body: unknown = {}) {
  const { a, reached } = app();
  const res = await a.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  return { status: res.statusCode, body: res.json<{ message: string; validationErrors: Record<string, string[]> | null }>(), reached };
}

describe('a NUL character anywhere in a request', () => {
  it('passes requests without one', async () => {
    const res = await call('/items/a?q=b', { name: 'x', list: [{ uri: 'y' }] });
    expect(res.status).toBe(200);
    expect(res.reached).toEqual(['/items/a?q=b']);
  });

  it.each([
    ['a path parameter', '/items/a%00b', {}, 'id'],
    ['a query value', '/items/a?search=x%00', {}, 'search'],
    ['a body field', '/items/a', { email: 'a\u0000@example.com' }, 'email'],
    ['a nested body field', '/items/a', { login: { uris: [{ uri: 'ok' }, { uri: '\u0000' }] } }, 'login.uris.1.uri'],
    ['a body key', '/items/a', { ['na\u0000me']: 'x' }, 'na\u0000me'],
    ['an id of a list', '/items/a', { ids: ['a', 'b', 'c\u0000', 'd'] }, 'ids.2'],
    ['a string of a top-level list', '/items/a', ['a', '\u0000'], '1'],
    ['a whole string body', '/items/a', '\u0000', 'body'],
  ])('is refused with a 400 naming the field, before the handler: %s', async (_where, url, body, field) => {
    const res = await call(url, body);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validationErrors ?? {})).toEqual([field]);
    expect(res.body.validationErrors?.[field]?.[0]).toContain('NUL character');
    expect(res.reached).toEqual([]);
  });
});
