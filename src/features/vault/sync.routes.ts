import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { SyncService } from './sync.service.js';
import { SyncQuery, SyncResponse, newestItemType, syncBody } from './sync.schemas.js';

/**
 * The answer's chunks as a stream, one chunk per read: the cached section's pages are sent as
 * they are, never copied into one buffer. Not `Readable.from(chunks)`: measured here, a server
 * answering syncs through it kept about 3 KB of native memory per answer that it never gave
 * back (malloc's heap grew from 8 to 31 MB over 8,000 syncs of a one-item vault), and through
 * this stream it keeps none.
 */
function chunkStream(chunks: readonly Buffer[]): Readable {
  let next = 0;
  return new Readable({
    read() {
      this.push(next < chunks.length ? chunks[next++] : null);
    },
  });
}

/**
 * The answer of a vault still being read (sync-vault.ts, SpilledVault): `head`, the items as
 * they come, `tail`. Destroyed (the client gone, or the reading failed), it abandons the items,
 * which stops their reading.
 */
function spilledStream(head: Buffer, items: AsyncIterable<Buffer>, tail: Buffer): Readable {
  const pages = items[Symbol.asyncIterator]();
  let stage: 'head' | 'items' | 'tail' | 'done' = 'head';
  return new Readable({
    read() {
      if (stage === 'head') {
        stage = 'items';
        this.push(head);
      } else if (stage === 'items') {
        pages.next().then(
          (page) => {
            if (!page.done) return this.push(page.value);
            stage = 'done';
            return this.push(tail);
          },
          (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
        );
      } else this.push(null);
    },
    destroy(error, done) {
      void pages.return?.();
      done(error);
    },
  });
}

/** `GET /sync`: the whole vault in one answer; clients call it when the revision date moved. */
export const syncRoutes: FastifyPluginAsync<{ sync: SyncService }> = async (app, { sync }) => {
  app.get<{ Querystring: { excludeDomains: boolean } }>(
    '/sync',
    {
      config: { access: access.user },
      schema: {
        tags: ['Sync'],
        summary: 'Sync the vault',
        description:
          "Answers everything a client caches in one document: the caller's profile with their confirmed organizations, folders, the collections they reach, their items and the organization items in those collections, policies and equivalent domains (left out with `excludeDomains=true`); clients call it when the account revision date moved. As the official server does, SSH key items are left out for clients older than 2024.12 or that send no `Bitwarden-Client-Version`, and bank account, driver's license and passport items for clients older than 2026.2. Access: any signed-in user (`user`).",
        querystring: SyncQuery,
        response: { 200: SyncResponse },
      },
    },
    async (request, reply) => {
      const caller = userCaller(request);
      const data = await sync.load(caller, { newestType: newestItemType(caller.client.clientVersion) });
      const body = syncBody(data, { excludeDomains: request.query.excludeDomains });
      reply.type('application/json; charset=utf-8');
      if (body.length === undefined) return reply.send(spilledStream(body.head, body.items, body.tail));
      return reply.header('content-length', body.length).send(chunkStream(body.chunks));
    },
  );
};
