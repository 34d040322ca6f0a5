import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { serializerCompiler, successSchemaUnder2xx } from './serialization.js';

const Item = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const Failure = { type: 'object', properties: { message: { type: 'string' } } } as const;

describe('successSchemaUnder2xx', () => {
  it('serializes a 200 answer with the route`s 200 schema under 2xx, leaves other codes alone and the recorded schema as written', async () => {
    const app = Fastify({ exposeHeadRoutes: false });
    const recorded: unknown[] = [];
    // As the API docs record them: before the hook, the responses as written.
    app.addHook('onRoute', (route) => void recorded.push(route.schema?.response));
    successSchemaUnder2xx(app);
    app.setSerializerCompiler(serializerCompiler);
    const given: Record<string, unknown>[] = [];
    app.addHook('onRoute', (route) => void given.push(route.schema?.response as Record<string, unknown>));
    app.get('/item', { schema: { response: { 200: Item, 409: Failure } } }, async (_request, reply) =>
      reply.send({ id: 'a', secret: 'not declared, so not sent' }),
    );
    app.get('/conflict', { schema: { response: { 200: Item, 409: Failure } } }, async (_request, reply) => reply.code(409).send({ message: 'm', extra: 1 }));
    // A route answering another 2xx with a schema of its own keeps its keys.
    app.delete('/item', { schema: { response: { 200: Item, 204: { type: 'null' } } } }, async (_request, reply) => reply.code(204).send(null));
    await app.ready();

    expect(Object.keys(given[0]!)).toEqual(['409', '2xx']);
    expect(Object.keys(given[2]!)).toEqual(['200', '204']);
    expect(Object.keys(recorded[0] as object)).toEqual(['200', '409']);

    const item = await app.inject({ method: 'GET', url: '/item' });
    expect(item.statusCode).toBe(200);
    expect(item.json()).toEqual({ id: 'a' });
    const conflict = await app.inject({ method: 'GET', url: '/conflict' });
    expect(conflict.json()).toEqual({ message: 'm' });
    expect((await app.inject({ method: 'DELETE', url: '/item' })).statusCode).toBe(204);
    await app.close();
  });
});
