import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../shared/clock.js';

/**
 * Icons on disk, one file per domain (`<domain>.icon`, the image as fetched), and the domains
 * that had none (`<domain>.miss`, empty). A file's modification time is its age: an icon older
 * than the TTL, or a miss older than the negative TTL, counts as absent. The total stays under
 * the size limit by removing the oldest files first. Domains are validated hostnames, so they
 * are safe file names.
 */

export interface IconCacheOptions {
  dir: string;
  maxBytes: number;
  ttlMs: number;
  negativeTtlMs: number;
  clock: Clock;
}

export type CacheLookup = { kind: 'icon'; body: Buffer } | { kind: 'miss' } | { kind: 'absent' };

export function createIconCache({ dir, maxBytes, ttlMs, negativeTtlMs, clock }: IconCacheOptions) {
  /** What the directory holds: name → size and age; read from disk on first use. */
  let index: Map<string, { size: number; mtimeMs: number }> | null = null;
  let total = 0;
  /** A file costs its bytes and a little for its directory entry, so that misses count too. */
  const cost = (size: number) => size + 256;

  async function load() {
    if (index) return index;
    await mkdir(dir, { recursive: true });
    const entries = new Map<string, { size: number; mtimeMs: number }>();
    for (const name of await readdir(dir)) {
      if (!name.endsWith('.icon') && !name.endsWith('.miss')) continue;
      const info = await stat(join(dir, name)).catch(() => null);
      if (info?.isFile()) entries.set(name, { size: cost(info.size), mtimeMs: info.mtimeMs });
    }
    index = new Map([...entries].sort((a, b) => a[1].mtimeMs - b[1].mtimeMs));
    total = [...index.values()].reduce((sum, e) => sum + e.size, 0);
    return index;
  }

  async function remove(name: string) {
    const entries = await load();
    const entry = entries.get(name);
    if (entry) {
      entries.delete(name);
      total -= entry.size;
    }
    await unlink(join(dir, name)).catch(() => undefined);
  }

  async function put(name: string, body: Buffer) {
    const entries = await load();
    const path = join(dir, name);
    const temporary = `${path}.${process.pid}.tmp`;
    await writeFile(temporary, body);
    await rename(temporary, path);
    const previous = entries.get(name);
    if (previous) {
      entries.delete(name);
      total -= previous.size;
    }
    // Map order is age order: the newest goes last.
    entries.set(name, { size: cost(body.length), mtimeMs: clock.now().getTime() });
    total += cost(body.length);
    for (const [oldest] of entries) {
      if (total <= maxBytes) break;
      await remove(oldest);
    }
  }

  return {
    async get(domain: string): Promise<CacheLookup> {
      const entries = await load();
      const now = clock.now().getTime();
      const icon = entries.get(`${domain}.icon`);
      if (icon) {
        if (now - icon.mtimeMs < ttlMs) {
          const body = await readFile(join(dir, `${domain}.icon`)).catch(() => null);
          if (body) return { kind: 'icon', body };
        }
        await remove(`${domain}.icon`);
      }
      const miss = entries.get(`${domain}.miss`);
      if (miss) {
        if (now - miss.mtimeMs < negativeTtlMs) return { kind: 'miss' };
        await remove(`${domain}.miss`);
      }
      return { kind: 'absent' };
    },
    async putIcon(domain: string, body: Buffer) {
      await remove(`${domain}.miss`);
      await put(`${domain}.icon`, body);
    },
    async putMiss(domain: string) {
      await put(`${domain}.miss`, Buffer.alloc(0));
    },
    /** Bytes the cache holds now. */
    async size() {
      await load();
      return total;
    },
  };
}

export type IconCache = ReturnType<typeof createIconCache>;
