import { createReadStream, lstatSync, mkdirSync, readdirSync, copyFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { BadArchive, openZip } from './web-vault-zip.js';

/**
 * Unpacks a web vault release (a zip, a gzip-compressed tar or a folder) into an empty folder,
 * refusing what a release never holds and an archive could use to write elsewhere: absolute
 * paths, `..`, links and devices, the same path twice, and more files or bytes than the limits.
 */

export interface UnpackLimits {
  /** Bytes of all files together, unpacked. */
  maxBytes: number;
  /** Files and folders together. */
  maxEntries: number;
}

/**
 * A web vault release unpacks to about 100 MB in a few thousand files (with its source maps);
 * these leave room for years of growth and still stop a zip bomb long before the disk fills.
 */
export const DEFAULT_LIMITS: UnpackLimits = { maxBytes: 1024 * 1024 * 1024, maxEntries: 50_000 };

export type SourceKind = 'zip' | 'tar.gz' | 'folder';

/** The path an entry names, made relative and checked; null for the archive's own root (`./`). */
function entryPath(raw: string): string | null {
  if (raw.includes('\0')) throw new BadArchive(`an entry name holds a NUL byte: ${JSON.stringify(raw)}`);
  if (raw.includes('\\')) throw new BadArchive(`${raw}: backslashes in entry names are refused (a path meant for Windows, or a way out of the folder)`);
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) throw new BadArchive(`${raw}: absolute paths are refused`);
  const parts = raw.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new BadArchive(`${raw}: paths with ".." are refused (they lead out of the folder)`);
  return parts.length === 0 ? null : parts.join('/');
}

/** Writes checked entries under `root`, counting them against the limits. */
class Writer {
  private entries = 0;
  private bytes = 0;
  private readonly seen = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly limits: UnpackLimits,
  ) {}

  /** Counts bytes about to be written, before they are held in memory. */
  countBytes(name: string, size: number): void {
    this.bytes += size;
    if (this.bytes > this.limits.maxBytes) {
      throw new BadArchive(`${name}: the release unpacks to more than ${this.limits.maxBytes} bytes, more than a web vault needs (a zip bomb?)`);
    }
  }

  private claim(path: string): string {
    if (this.seen.has(path)) throw new BadArchive(`${path} appears twice in the archive`);
    this.seen.add(path);
    this.entries += 1;
    if (this.entries > this.limits.maxEntries) throw new BadArchive(`the archive has more than ${this.limits.maxEntries} entries, more than a web vault release can have`);
    return join(this.root, ...path.split('/'));
  }

  folder(path: string): void {
    mkdirSync(this.claim(path), { recursive: true });
  }

  file(path: string, data: Buffer): void {
    const target = this.claim(path);
    mkdirSync(join(target, '..'), { recursive: true });
    // `wx`: a name a folder or an earlier entry already took is an error, never an overwrite.
    writeFileSync(target, data, { flag: 'wx' });
  }

  copy(path: string, from: string): void {
    const target = this.claim(path);
    mkdirSync(join(target, '..'), { recursive: true });
    copyFileSync(from, target);
  }
}

/** What the source is, from its first bytes (the file name may say anything). */
export async function sourceKind(source: string): Promise<SourceKind> {
  if (lstatSync(source).isDirectory()) return 'folder';
  const file = await open(source, 'r');
  try {
    const head = Buffer.alloc(4);
    await file.read(head, 0, 4, 0);
    if (head.readUInt16LE(0) === 0x4b50) return 'zip';
    if (head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  } finally {
    await file.close();
  }
  throw new BadArchive('it is not a zip archive, a gzip-compressed tar archive or a folder');
}

/** Unpacks `source` into the empty folder `root`. */
export async function unpack(source: string, kind: SourceKind, root: string, limits: UnpackLimits = DEFAULT_LIMITS): Promise<void> {
  const writer = new Writer(root, limits);
  if (kind === 'zip') await unpackZip(source, writer, limits);
  else if (kind === 'tar.gz') await unpackTar(source, writer, limits);
  else copyFolder(source, '', writer);
}

async function unpackZip(source: string, writer: Writer, limits: UnpackLimits): Promise<void> {
  const zip = await openZip(source, limits.maxEntries);
  try {
    // Every name and the declared total are checked before the first byte is inflated.
    const paths = zip.entries.map((entry) => {
      if (entry.special) throw new BadArchive(`${entry.name} is a symbolic link or a special file; a web vault holds only files and folders`);
      return entryPath(entry.name);
    });
    const declared = zip.entries.reduce((sum, entry) => sum + (entry.directory ? 0 : entry.size), 0);
    if (declared > limits.maxBytes) throw new BadArchive(`the archive declares ${declared} bytes unpacked, more than the ${limits.maxBytes} a web vault needs (a zip bomb?)`);
    for (const [i, entry] of zip.entries.entries()) {
      const path = paths[i];
      if (path === null || path === undefined) continue;
      if (entry.directory) {
        writer.folder(path);
        continue;
      }
      writer.countBytes(path, entry.size);
      writer.file(path, await zip.read(entry));
    }
  } finally {
    zip.close();
  }
}

async function unpackTar(source: string, writer: Writer, limits: UnpackLimits): Promise<void> {
  // The tar stream is the files plus a 512-byte header and up to 511 bytes of padding each.
  const maxStream = limits.maxBytes + (limits.maxEntries + 4) * 1024;
  let streamed = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      streamed += chunk.length;
      if (streamed > maxStream) done(new BadArchive(`the archive unpacks to more than ${maxStream} bytes, more than a web vault needs (a gzip bomb?)`));
      else done(null, chunk);
    },
  });
  let problem: Error | undefined;
  // The parser is an event emitter with write() and end(), not a stream: this feeds it as one.
  const feed = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (parser.write(chunk)) done();
      else parser.once('drain', () => done());
    },
    final(done) {
      parser.once('end', () => done());
      parser.end();
    },
  });
  // The first problem stops reading: nothing after it is unpacked.
  const stop = (error: unknown): void => {
    problem ??= error instanceof BadArchive || (error as NodeJS.ErrnoException).syscall ? (error as Error) : new BadArchive(`not a readable tar archive: ${(error as Error).message}`);
    feed.destroy(problem);
  };
  const parser = new Parser({
    strict: true,
    onReadEntry(entry: ReadEntry) {
      if (problem !== undefined) {
        entry.resume();
        return;
      }
      try {
        readTarEntry(entry, writer, stop);
      } catch (error) {
        entry.resume();
        stop(error);
      }
    },
  });
  parser.on('error', stop);
  try {
    await pipeline(createReadStream(source), createGunzip(), bounded, feed);
  } catch (error) {
    throw problem ?? (error instanceof BadArchive ? error : new BadArchive(`not a readable gzip-compressed tar archive: ${(error as Error).message}`));
  }
  if (problem !== undefined) throw problem;
}

function readTarEntry(entry: ReadEntry, writer: Writer, fail: (error: unknown) => void): void {
  const path = entryPath(entry.path);
  if (entry.type === 'Directory') {
    if (path !== null) writer.folder(path);
    entry.resume();
    return;
  }
  if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile') {
    throw new BadArchive(`${entry.path} is a ${entry.type === 'SymbolicLink' || entry.type === 'Link' ? 'link' : `special entry (${entry.type})`}; a web vault holds only files and folders`);
  }
  if (path === null) throw new BadArchive(`${entry.path}: a file with no name`);
  writer.countBytes(path, entry.size);
  const chunks: Buffer[] = [];
  entry.on('data', (chunk: Buffer) => chunks.push(chunk));
  entry.on('end', () => {
    try {
      writer.file(path, Buffer.concat(chunks));
    } catch (error) {
      fail(error);
    }
  });
}

/** Copies a folder, refusing links and special files rather than following them. */
function copyFolder(from: string, prefix: string, writer: Writer): void {
  for (const name of readdirSync(from).sort()) {
    const path = prefix === '' ? name : `${prefix}/${name}`;
    const full = join(from, name);
    const stat = lstatSync(full);
    if (stat.isDirectory()) {
      writer.folder(path);
      copyFolder(full, path, writer);
    } else if (stat.isFile()) {
      writer.countBytes(path, stat.size);
      writer.copy(path, full);
    } else {
      throw new BadArchive(`${path} is a symbolic link or a special file; a web vault holds only files and folders`);
    }
  }
}
