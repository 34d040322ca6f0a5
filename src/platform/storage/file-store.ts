import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
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
  /** Every stored file (its key and when it was written), for the sweeper of files no row names. */
  list(): AsyncIterable<StoredFile>;
}

export interface StoredFile {
  key: string;
  modified: Date;
}

const AREAS = ['attachments', 'sends'] as const;

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
      const sink = createWriteStream(temp, { flags: 'wx' });
      try {
        await pipeline(source, counter, sink);
        await rename(temp, path);
      } catch (error) {
        // pipeline rejects on the source's error without waiting for the sink to close, and the
        // sink may still be opening (creating) the temporary file: remove it only once it is closed.
        if (!sink.closed) await new Promise<void>((closed) => sink.once('close', () => closed()));
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
        return { stream: createReadStream(path, { highWaterMark: 1024 * 1024 }), size: info.size };
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
    async *list() {
      const entries = async (path: string) =>
        readdir(path, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return [];
          throw error;
        });
      for (const area of AREAS) {
        for (const folder of await entries(join(base, area))) {
          if (!folder.isDirectory()) continue;
          for (const file of await entries(join(base, area, folder.name))) {
            const key = `${area}/${folder.name}/${file.name}`;
            // Temporary files of uploads in progress are not files of the store.
            if (!file.isFile() || !KEY.test(key)) continue;
            const info = await stat(join(base, area, folder.name, file.name)).catch(() => null);
            if (info) yield { key, modified: info.mtime };
          }
        }
      }
    },
  };
}

export interface S3Options {
  bucket: string;
  region: string;
  /** An S3-compatible service's URL (MinIO, Ceph, R2, …); AWS when unset. */
  endpoint?: string | undefined;
  forcePathStyle: boolean;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  /** Put before every key, e.g. `strongroom/`. */
  prefix: string;
}

/**
 * Files in an S3-compatible bucket, for several instances. Uploads stream through a multipart
 * upload (5 MB parts, at most four in flight): the object appears only when the upload completes,
 * and a failed or oversize upload is aborted, leaving nothing. Downloads stream the object's body.
 */
export function s3FileStore(options: S3Options): FileStore {
  let loaded: ReturnType<typeof loadS3> | undefined;
  const sdk = () => (loaded ??= loadS3(options));
  const Bucket = options.bucket;
  const keyOf = (key: string) => `${options.prefix}${checkKey(key)}`;
  return {
    async put(key, source, maxBytes) {
      const counter = byteLimit(maxBytes);
      source.on('error', (error) => counter.destroy(error));
      const { client, Upload } = await sdk();
      const upload = new Upload({ client, params: { Bucket, Key: keyOf(key), Body: source.pipe(counter) }, queueSize: 4, partSize: 5 * 1024 * 1024, leavePartsOnError: false });
      try {
        await upload.done();
      } catch (error) {
        source.resume();
        // A failure of the bytes (too many, a broken request) beats the upload's own error.
        throw counter.errored ?? error;
      }
      return counter.bytes;
    },
    async get(key) {
      const { client, s3 } = await sdk();
      try {
        const object = await client.send(new s3.GetObjectCommand({ Bucket, Key: keyOf(key) }));
        if (!object.Body) return null;
        return { stream: object.Body as Readable, size: Number(object.ContentLength ?? 0) };
      } catch (error) {
        if (error instanceof s3.NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null;
        throw error;
      }
    },
    async delete(key) {
      const { client, s3 } = await sdk();
      await client.send(new s3.DeleteObjectCommand({ Bucket, Key: keyOf(key) }));
    },
    async deleteAll(prefix) {
      const { client, s3 } = await sdk();
      const Prefix = `${keyOf(prefix)}/`;
      for (;;) {
        const listed = await client.send(new s3.ListObjectsV2Command({ Bucket, Prefix, MaxKeys: 1000 }));
        const keys = (listed.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
        if (keys.length === 0) return;
        await client.send(new s3.DeleteObjectsCommand({ Bucket, Delete: { Objects: keys, Quiet: true } }));
        if (!listed.IsTruncated) return;
      }
    },
    async *list() {
      const { client, s3 } = await sdk();
      for (const area of AREAS) {
        let ContinuationToken: string | undefined;
        do {
          const listed = await client.send(new s3.ListObjectsV2Command({ Bucket, Prefix: `${options.prefix}${area}/`, MaxKeys: 1000, ContinuationToken }));
          for (const object of listed.Contents ?? []) {
            const key = object.Key?.slice(options.prefix.length);
            if (key && KEY.test(key)) yield { key, modified: object.LastModified ?? new Date(0) };
          }
          ContinuationToken = listed.IsTruncated ? listed.NextContinuationToken : undefined;
        } while (ContinuationToken);
      }
    },
  };
}

/** The AWS SDK (about 20 MB and 150 ms to load) and a client, loaded by the first use of an S3 store. */
async function loadS3(options: S3Options) {
  const [s3, { Upload }] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
  const client = new s3.S3Client({
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.accessKeyId && options.secretAccessKey ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } } : {}),
  });
  return { s3, Upload, client };
}
