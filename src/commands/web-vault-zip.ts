import type { FileHandle } from 'node:fs/promises';
import { crc32, inflateRawSync } from 'node:zlib';

/**
 * A small reader of zip archives, for the web vault release zips: Node has none built in, and the
 * parts a release zip uses (stored or deflated entries, listed in the central directory) are few.
 * Sizes are read from the central directory before anything is inflated, and each entry inflates to
 * at most the size it declares, so a zip bomb is refused by its declared sizes or stopped at them.
 */

/** An archive that cannot be installed; the message says why, for the operator. */
export class BadArchive extends Error {}

export interface ZipEntry {
  name: string;
  directory: boolean;
  /** Symbolic links, devices and the like: never written. */
  special: boolean;
  method: number;
  encrypted: boolean;
  compressedSize: number;
  size: number;
  crc: number;
  localHeaderOffset: number;
}

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
/** The end record is 22 bytes plus a comment of at most 65,535. */
const END_SEARCH = 22 + 0xffff;
const STORED = 0;
const DEFLATED = 8;
const UNIX = 3;
const TYPE_MASK = 0o170000;
const REGULAR = 0o100000;
const FOLDER = 0o040000;

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  if (bytesRead !== length) throw new BadArchive('the zip archive is truncated');
  return buffer;
}

/** The entries of the central directory; refuses more than `maxEntries` before reading them. */
export async function readZipDirectory(file: FileHandle, fileSize: number, maxEntries: number): Promise<ZipEntry[]> {
  const tailLength = Math.min(fileSize, END_SEARCH);
  const tail = await readAt(file, fileSize - tailLength, tailLength);
  let end = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === END_OF_DIRECTORY) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new BadArchive('not a readable zip archive (no central directory)');
  const count = tail.readUInt16LE(end + 10);
  const directorySize = tail.readUInt32LE(end + 12);
  const directoryOffset = tail.readUInt32LE(end + 16);
  if (count === 0xffff || directorySize === 0xffffffff || directoryOffset === 0xffffffff) {
    throw new BadArchive('ZIP64 archives are not supported (a web vault release is far smaller than 4 GB)');
  }
  if (count > maxEntries) throw new BadArchive(`the archive has ${count} entries, more than the ${maxEntries} a web vault release can have`);
  if (directoryOffset + directorySize > fileSize) throw new BadArchive('the zip archive is truncated');

  const directory = await readAt(file, directoryOffset, directorySize);
  const entries: ZipEntry[] = [];
  let at = 0;
  for (let n = 0; n < count; n++) {
    if (at + 46 > directory.length || directory.readUInt32LE(at) !== DIRECTORY_ENTRY) throw new BadArchive('the zip central directory is damaged');
    const madeBy = directory.readUInt16LE(at + 4) >> 8;
    const flags = directory.readUInt16LE(at + 8);
    const nameLength = directory.readUInt16LE(at + 28);
    const next = at + 46 + nameLength + directory.readUInt16LE(at + 30) + directory.readUInt16LE(at + 32);
    if (next > directory.length) throw new BadArchive('the zip central directory is damaged');
    // Bit 11: the name is UTF-8; otherwise code page 437, whose ASCII part is all a release uses.
    const name = directory.subarray(at + 46, at + 46 + nameLength).toString(flags & 0x800 ? 'utf8' : 'latin1');
    const unixType = madeBy === UNIX ? (directory.readUInt32LE(at + 38) >>> 16) & TYPE_MASK : 0;
    const directoryName = name.endsWith('/');
    entries.push({
      name,
      directory: directoryName || unixType === FOLDER,
      special: unixType !== 0 && unixType !== REGULAR && unixType !== FOLDER,
      method: directory.readUInt16LE(at + 10),
      encrypted: (flags & 0x1) !== 0,
      crc: directory.readUInt32LE(at + 16),
      compressedSize: directory.readUInt32LE(at + 20),
      size: directory.readUInt32LE(at + 24),
      localHeaderOffset: directory.readUInt32LE(at + 42),
    });
    at = next;
  }
  return entries;
}

/** The content of one file entry, checked against its declared size and CRC-32. */
export async function readZipEntry(file: FileHandle, fileSize: number, entry: ZipEntry): Promise<Buffer> {
  if (entry.encrypted) throw new BadArchive(`${entry.name} is encrypted`);
  if (entry.method !== STORED && entry.method !== DEFLATED) throw new BadArchive(`${entry.name} uses compression method ${entry.method}; only stored and deflated entries are read`);
  const header = await readAt(file, entry.localHeaderOffset, 30);
  if (header.readUInt32LE(0) !== LOCAL_HEADER) throw new BadArchive(`${entry.name}: the zip archive is damaged`);
  const start = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (start + entry.compressedSize > fileSize) throw new BadArchive('the zip archive is truncated');
  const raw = await readAt(file, start, entry.compressedSize);
  let data: Buffer;
  if (entry.method === STORED) {
    data = raw;
  } else {
    try {
      data = inflateRawSync(raw, { maxOutputLength: Math.max(entry.size, 1) });
    } catch (error) {
      if (error instanceof RangeError) throw new BadArchive(`${entry.name} inflates to more than the ${entry.size} bytes it declares (a zip bomb?)`);
      throw new BadArchive(`${entry.name} cannot be inflated: ${(error as Error).message}`);
    }
  }
  if (data.length !== entry.size) throw new BadArchive(`${entry.name} holds ${data.length} bytes but declares ${entry.size}`);
  if (crc32(data) !== entry.crc) throw new BadArchive(`${entry.name} fails its CRC-32 check (a damaged download?)`);
  return data;
}
