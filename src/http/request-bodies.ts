import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import { BadRequest } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `large`: the route takes bodies up to BODY_LIMIT_BYTES (imports, directory sync, collect).
     * Without it a route takes AUTHENTICATED_BODY_LIMIT_BYTES, or ANONYMOUS_BODY_LIMIT_BYTES when
     * anyone may call it: a body is read and parsed before a handler can refuse it, so what a
     * caller without a token can make the server hold must stay small.
     */
    bodySize?: 'large';
  }
}

/** Deeper nesting than any request of the official clients (a cipher's login URIs are four levels). */
export const MAX_JSON_DEPTH = 32;
/** More entries in one array or object than any route accepts (Secrets Manager imports take the most). */
export const MAX_JSON_ENTRIES = 100_000;

type BodyLimits = Pick<Config, 'bodyLimitBytes' | 'authenticatedBodyLimitBytes' | 'anonymousBodyLimitBytes'>;

/**
 * Gives every route its body limit from its declared access rule, unless the route sets one
 * itself. Fastify refuses a body whose Content-Length is over the limit before reading any of it,
 * and stops reading a chunked one as soon as it passes.
 */
export function limitRequestBodies(app: FastifyInstance, config: BodyLimits): void {
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit !== undefined) return;
    const anonymous = (route.config?.access?.principals.length ?? 0) === 0;
    route.bodyLimit =
      route.config?.bodySize === 'large' ? config.bodyLimitBytes : anonymous ? config.anonymousBodyLimitBytes : config.authenticatedBodyLimitBytes;
  });
}

/**
 * Checks the shape of a JSON text before `JSON.parse` builds it: nesting no deeper than
 * MAX_JSON_DEPTH and no array or object with more than MAX_JSON_ENTRIES entries. One pass over
 * the characters, allocating nothing, so a bomb (a million nested arrays, two million numbers) is
 * refused in the time it takes to read it rather than parsed into a gigabyte of objects.
 * Malformed JSON passes through: JSON.parse reports it.
 */
export function checkJsonShape(text: string): void {
  // The commas seen so far in each open container: its entries, less one.
  const entries: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    switch (c) {
      case 0x22:
        inString = true;
        break;
      case 0x5b: // [
      case 0x7b: // {
        if (entries.length >= MAX_JSON_DEPTH) throw BadRequest.field('', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`);
        entries.push(0);
        break;
      case 0x5d: // ]
      case 0x7d: // }
        entries.pop();
        break;
      case 0x2c: {
        // ,
        const depth = entries.length - 1;
        if (depth < 0) break;
        const count = (entries[depth] as number) + 1;
        if (count >= MAX_JSON_ENTRIES) throw BadRequest.field('', `An array or object in the JSON body has more than ${MAX_JSON_ENTRIES} entries.`);
        entries[depth] = count;
        break;
      }
      default:
        break;
    }
  }
}

/**
 * The JSON body parser: an empty body is no body (clients send bodiless commands such as
 * `PUT /ciphers/{id}/delete` with a JSON content type), and the shape is checked before parsing.
 */
export function parseJsonBody(defaultParser: (request: FastifyRequest, body: string, done: (error: Error | null, body?: unknown) => void) => unknown) {
  return (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void): void => {
    const text = body.toString();
    if (!/\S/.test(text)) {
      done(null, undefined);
      return;
    }
    try {
      checkJsonShape(text);
    } catch (error) {
      done(error as Error);
      return;
    }
    void defaultParser(request, text, done);
  };
}
