import type { FastifyInstance } from 'fastify';
import { BadRequest } from './errors.js';

/** Whether any string in `value` (objects and arrays walked without recursion) holds U+0000. */
function holdsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (next.includes('\u0000')) return true;
    } else if (next && typeof next === 'object') {
      for (const [key, item] of Object.entries(next)) {
        if (key.includes('\u0000')) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

const REFUSED = 'The request holds a NUL character (\\u0000), which no field accepts.';

/**
 * Refuses a NUL character anywhere in a request's path parameters, query or body with a 400:
 * no field of this API may hold one, and PostgreSQL cannot store or compare it (a query with
 * one is an error, which would otherwise surface as a 500). Parameters and query are checked
 * before the access rules (which read them), bodies once parsed.
 */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (holdsNul(request.params) || holdsNul(request.query)) throw new BadRequest(REFUSED);
  });
  app.addHook('preValidation', async (request) => {
    if (holdsNul(request.body)) throw new BadRequest(REFUSED);
  });
}
