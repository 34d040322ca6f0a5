import { createHash } from 'node:crypto';
import type { ReadSet } from '../../platform/audit/read-sets.js';
import { createByteLru } from '../../shared/byte-lru.js';
import type { Releasable } from '../../shared/cache-release.js';

/**
 * Encoded answers of the large Secrets Manager reads (the listings, the machine sync,
 * get-by-ids), reused while the organization's Secrets Manager revision (sm-revisions.ts) is
 * unchanged. Automation polls the same answer over and over; building it reads, filters and
 * serialises thousands of secrets, sending it only copies bytes.
 *
 * The revision is read from the database before the answer is built, on every request, so an
 * answer is never served after a change made by any instance: a change committed while an
 * answer is built moves the revision past the one it is stored under. The key holds everything
 * else an answer depends on, the caller's grants among them (`secretAccessKey`). A caller reads
 * the revision (`secretsManagerRevision`) while it reads the grants, on PostgreSQL two queries at
 * once, and hands it to `answer`.
 */
export interface SmAnswer {
  body: Buffer;
  /** The secrets the answer hands out, for the read's audit event. */
  reads?: ReadSet;
}

interface Entry extends SmAnswer {
  revision: number;
}

export interface SmAnswers extends Releasable {
  /** The answer stored under `key` for `revision`, else `build`'s, stored. */
  answer(organizationId: string, revision: number, key: string, build: () => Promise<SmAnswer>): Promise<SmAnswer>;
}

export function createSmAnswers(maxBytes: number): SmAnswers {
  const entries = createByteLru<Entry>(maxBytes, (entry) => entry.body.length + (entry.reads ? entry.reads.secretIds.length * 40 : 0));
  return {
    async answer(organizationId, revision, key, build) {
      const fullKey = `${organizationId}|${key}`;
      const cached = entries.get(fullKey);
      if (cached?.revision === revision) return cached;
      const built = await build();
      entries.set(fullKey, { ...built, revision });
      return built;
    },
    dropUnused: () => entries.dropUnused(),
  };
}

/** A short fixed-length name for a long key part (a list of ids, a caller's grants). */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
