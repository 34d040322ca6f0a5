import { crc32 } from 'node:zlib';
import { getFileNameLowLevel, openPromise, type Entry, type ZipFile } from 'yauzl';

/**
 * Reads the web vault release zips through yauzl, which parses the archive, takes sizes from the
 * central directory (ZIP64 too) and stops an entry's stream at the size it declares
 * (validateEntrySizes), so a zip bomb is refused by its declared sizes or stopped at them.
 */

/** An archive that cannot be installed; the message says why, for the operator. */
export class BadArchive extends Error {}

export interface ZipEntry {
  /** The name as the archive spells it, unchecked: the caller checks it as it checks tar names. */
  name: string;
  directory: boolean;
  /** Symbolic links, devices and the like: never written. */
  special: boolean;
  size: number;
  entry: Entry;
}

export interface OpenZip {
  entries: ZipEntry[];
  /** The content of one file entry, checked against its declared size and CRC-32. */
  read(entry: ZipEntry): Promise<Buffer>;
  close(): void;
}

const STORED = 0;
const DEFLATED = 8;
const UNIX = 3;
const TYPE_MASK = 0o170000;
const REGULAR = 0o100000;
const FOLDER = 0o040000;

function unreadable(error: unknown): BadArchive {
  return error instanceof BadArchive ? error : new BadArchive(`not a readable zip archive: ${(error as Error).message}`);
}

/** Opens a zip and reads its central directory; refuses more than `maxEntries` before reading them. */
export async function openZip(path: string, maxEntries: number): Promise<OpenZip> {
  // Names are decoded here rather than by yauzl (decodeStrings) so that they reach the same check,
  // with the same messages, as tar and folder names; strictFileNames keeps a backslash a backslash.
  const zip = await openPromise(path, { autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: true }).catch((error: unknown) => {
    throw unreadable(error);
  });
  try {
    if (zip.entryCount > maxEntries) throw new BadArchive(`the archive has ${zip.entryCount} entries, more than the ${maxEntries} a web vault release can have`);
    const entries: ZipEntry[] = [];
    for await (const entry of zip.eachEntry()) entries.push(describe(entry));
    return { entries, read: (entry) => readEntry(zip, entry), close: () => zip.close() };
  } catch (error) {
    zip.close();
    throw unreadable(error);
  }
}

function describe(entry: Entry): ZipEntry {
  const name = getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
  const unixType = entry.versionMadeBy >> 8 === UNIX ? (entry.externalFileAttributes >>> 16) & TYPE_MASK : 0;
  return {
    name,
    directory: name.endsWith('/') || unixType === FOLDER,
    special: unixType !== 0 && unixType !== REGULAR && unixType !== FOLDER,
    size: entry.uncompressedSize,
    entry,
  };
}

async function readEntry(zip: ZipFile, { name, size, entry }: ZipEntry): Promise<Buffer> {
  if (entry.isEncrypted()) throw new BadArchive(`${name} is encrypted`);
  const method = entry.compressionMethod;
  if (method !== STORED && method !== DEFLATED) throw new BadArchive(`${name} uses compression method ${method}; only stored and deflated entries are read`);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
  } catch (error) {
    // yauzl's size check says "too many bytes" when an entry inflates past its declared size.
    const message = (error as Error).message;
    if (message.startsWith('too many bytes')) throw new BadArchive(`${name} inflates to more than the ${size} bytes it declares (a zip bomb?)`);
    throw new BadArchive(`${name} cannot be read: ${message}`);
  }
  const data = Buffer.concat(chunks);
  // yauzl leaves the CRC-32 to its caller; node:zlib has it from Node 20.15 (package.json asks 20.19).
  if (crc32(data) !== entry.crc32) throw new BadArchive(`${name} fails its CRC-32 check (a damaged download?)`);
  return data;
}
