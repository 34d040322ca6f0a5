import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Where attachment and Send files live: the encrypted bytes the clients upload, stored as they
 * are and never parsed. Keys are `attachments/{cipherId}/{attachmentId}` and
 * `sends/{sendId}/{fileId}`. Writes are streamed and all-or-nothing: a file is visible under its
 * key only once every byte arrived; a failed write leaves nothing.
 */
export interface FileStore {
  /** Streams `source` to `key`; rejects with FileTooLarge past `maxBytes`. Resolves with the bytes written. */
  put(key: string, source: Readable, maxBytes: number): Promise<number>;
  /** The stored bytes as a stream, or null when there is no such file. */
  get(key: string): Promise<{ stream: Readable; size: number } | null>;
  delete(key: string): Promise<void>;
  /** Removes every file under `prefix/` (an item's or a Send's folder). */
  deleteAll(prefix: string): Promise<void>;
}

export class FileTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`The file is larger than ${maxBytes} bytes.`);
  }
}

/** Counts bytes passing through and fails the stream once more than `max` went by. */
export function byteLimit(max: number): Transform & { bytes: number } {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counter.bytes += chunk.length;
      if (counter.bytes > max) callback(new FileTooLarge(max));
      else callback(null, chunk);
    },
  }) as Transform & { bytes: number };
  counter.bytes = 0;
  return counter;
}

const KEY = /^(attachments|sends)\/[0-9a-z-]{1,64}(\/[0-9a-z-]{1,64})?$/;

function checkKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`invalid file key ${JSON.stringify(key)}`);
  return key;
}

/**
 * Files in a directory (FILES_DIR, by default DATA_DIR/files). A write goes to a temporary file
 * beside its target and is renamed over it when complete, so readers never see part of a file.
 */
export function localFileStore(root: string): FileStore {
  const base = resolve(root);
  const pathOf = (key: string) => {
    const path = resolve(base, checkKey(key));
    if (!path.startsWith(base + sep)) throw new Error('file key outside the store');
    return path;
  };
  return {
    async put(key, source, maxBytes) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const temp = join(dirname(path), `.upload-${randomBytes(8).toString('hex')}.tmp`);
      const counter = byteLimit(maxBytes);
      try {
        await pipeline(source, counter, createWriteStream(temp, { flags: 'wx' }));
        await rename(temp, path);
      } catch (error) {
        await rm(temp, { force: true });
        source.resume();
        throw error;
      }
      return counter.bytes;
    },
    async get(key) {
      const path = pathOf(key);
      try {
        const info = await stat(path);
        return { stream: createReadStream(path), size: info.size };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    async delete(key) {
      await unlink(pathOf(key)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    },
    async deleteAll(prefix) {
      await rm(pathOf(prefix), { recursive: true, force: true });
    },
  };
}
