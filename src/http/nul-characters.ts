import type { FastifyInstance } from 'fastify';
import { BadRequest } from './errors.js';

/**
 * Where the first string in `value` holding U+0000 is (`email`, `items.0.name`; the empty path
 * for `value` itself), or null. Objects and arrays are walked without recursion.
 */
function nulAt(value: unknown): string | null {
  const pending: [unknown, string][] = [[value, '']];
  while (pending.length > 0) {
    const [next, path] = pending.pop() as [unknown, string];
    if (typeof next === 'string') {
      if (next.includes('\u0000')) return path;
    } else if (next && typeof next === 'object') {
      for (const [key, item] of Object.entries(next)) {
        const at = path ? `${path}.${key}` : key;
        if (key.includes('\u0000')) return at;
        pending.push([item, at]);
      }
    }
  }
  return null;
}

function refuse(field: string): BadRequest {
  return BadRequest.field(field || 'body', `The ${field || 'body'} field holds a NUL character (\\u0000), which no field accepts.`);
}

/**
 * Refuses a NUL character anywhere in a request's path parameters, query or body with a 400
 * naming the field: no field of this API may hold one, and PostgreSQL cannot store or compare
 * it (a query with one is an error, which would otherwise surface as a 500). Parameters and
 * query are checked before the access rules (which read them), bodies once parsed.
 */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const at = nulAt(request.params) ?? nulAt(request.query);
    if (at !== null) throw refuse(at);
  });
  app.addHook('preValidation', async (request) => {
    const at = nulAt(request.body);
    if (at !== null) throw refuse(at);
  });
}
