import { randomBytes } from 'node:crypto';
import type * as Fs from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalS3, type LocalS3 } from '../../../test/support/s3.js';
import { FileTooLarge, localFileStore, s3FileStore, type FileStore } from './file-store.js';

/**
 * While set, the local store's temporary files open this many milliseconds late, as when libuv's
 * threads are all busy: the way to show what a store does with a file still being created.
 */
const slowOpen = vi.hoisted(() => ({ ms: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof Fs>();
  const open: typeof real.open = ((...args: Parameters<typeof real.open>) => {
    const late = slowOpen.ms;
    if (late === 0) return real.open(...args);
    setTimeout(() => real.open(...args), late);
  }) as typeof real.open;
  const createWriteStream: typeof real.createWriteStream = (path, options) =>
    real.createWriteStream(path, { ...(typeof options === 'object' ? options : { encoding: options }), fs: { ...real, open } });
  return { ...real, createWriteStream };
});

let dir: string;
let s3: LocalS3;
const stores: Record<string, () => FileStore> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'strongroom-store-'));
  s3 = await startLocalS3();
  stores.local = () => localFileStore(dir);
  stores.s3 = () =>
    s3FileStore({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', prefix: 'test/' });
});
afterAll(async () => {
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
});

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A source that yields `parts` and then fails, as a client whose upload breaks off. */
function broken(parts: Buffer[]): Readable {
  return Readable.from(
    (async function* () {
      for (const p of parts) yield p;
      throw new Error('connection reset');
    })(),
  );
}

describe.each(['local', 's3'])('the %s file store', (kind) => {
  const store = () => (stores[kind] as () => FileStore)();

  it('stores streamed bytes and streams them back unchanged', async () => {
    const bytes = randomBytes(6 * 1024 * 1024 + 123);
    const chunks = Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
    expect(await store().put('attachments/c1/a1', Readable.from(chunks), bytes.length)).toBe(bytes.length);
    const got = await store().get('attachments/c1/a1');
    expect(got?.size).toBe(bytes.length);
    expect((await bytesOf(got?.stream as Readable)).equals(bytes)).toBe(true);
  });

  it('refuses more bytes than allowed and leaves nothing', async () => {
    await expect(store().put('attachments/c2/a1', Readable.from([randomBytes(100)]), 99)).rejects.toBeInstanceOf(FileTooLarge);
    expect(await store().get('attachments/c2/a1')).toBeNull();
  });

  it('leaves nothing when the upload breaks off', async () => {
    await expect(store().put('attachments/c3/a1', broken([randomBytes(1000)]), 10_000)).rejects.toThrow();
    expect(await store().get('attachments/c3/a1')).toBeNull();
    if (kind === 'local') expect(await readdir(join(dir, 'attachments', 'c3'))).toEqual([]);
  });

  // Only the local store writes a file of its own (S3's multipart upload is tested above).
  it.runIf(kind === 'local')('leaves nothing when the upload breaks off while the file is still being created', async () => {
    slowOpen.ms = 50;
    try {
      await expect(store().put('attachments/c4/a1', broken([]), 10_000)).rejects.toThrow();
    } finally {
      slowOpen.ms = 0;
    }
    await new Promise((later) => setTimeout(later, 100));
    expect(await store().get('attachments/c4/a1')).toBeNull();
    expect(await readdir(join(dir, 'attachments', 'c4'))).toEqual([]);
  });

  it('deletes one file, and every file under a prefix', async () => {
    await store().put('sends/s1/f1', Readable.from([Buffer.from('one')]), 10);
    await store().put('sends/s1/f2', Readable.from([Buffer.from('two')]), 10);
    await store().put('sends/s2/f1', Readable.from([Buffer.from('other')]), 10);
    await store().delete('sends/s1/f1');
    expect(await store().get('sends/s1/f1')).toBeNull();
    await store().deleteAll('sends/s1');
    expect(await store().get('sends/s1/f2')).toBeNull();
    expect(await text((await store().get('sends/s2/f1'))?.stream as Readable)).toBe('other');
    await store().delete('sends/nothing/here');
  });

  it('lists every stored file with when it was written, and no upload in progress', async () => {
    const before = Date.now() - 5000;
    await store().put('attachments/l1/a1', Readable.from([Buffer.from('one')]), 10);
    await store().put('sends/l2/f1', Readable.from([Buffer.from('two')]), 10);
    if (kind === 'local') await writeFile(join(dir, 'attachments', 'l1', '.upload-0123456789abcdef.tmp'), 'part');
    const listed = new Map<string, Date>();
    for await (const file of store().list()) listed.set(file.key, file.modified);
    expect([...listed.keys()]).toEqual(expect.arrayContaining(['attachments/l1/a1', 'sends/l2/f1']));
    expect([...listed.keys()].every((key) => /^(attachments|sends)\/[0-9a-z-]+\/[0-9a-z-]+$/.test(key))).toBe(true);
    expect(listed.get('sends/l2/f1')?.getTime()).toBeGreaterThan(before);
  });

  it('refuses keys outside its layout', async () => {
    await expect(store().put('../escape', Readable.from([Buffer.from('x')]), 10)).rejects.toThrow(/invalid file key/);
  });
});
