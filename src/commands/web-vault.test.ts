import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../test/support/test-server.js';
import { checkedReleases } from '../features/web-vault/checked-versions.js';
import { runWebVaultCommand, WebVaultExitCode } from './web-vault.js';
import type { UnpackLimits } from './web-vault-unpack.js';
import { TextCapture as Output } from '../../test/support/capture.js';

/** One entry of a test archive; the options let a test write what a hostile archive would. */
interface Entry {
  name: string;
  data?: string | Buffer;
  folder?: boolean;
  /** Deflate the entry (zip); stored otherwise. */
  deflate?: boolean;
  /** The size the zip's directory declares, when it should lie. */
  declaredSize?: number;
  /** The CRC-32 the zip records, when it should not match the data. */
  crc?: number;
  /** Unix file type and mode bits, as `zip` records them (0o120777 for a symbolic link). */
  unixMode?: number;
  /** A tar entry of another type: '2' symbolic link, '1' hard link, '3' device. */
  tarType?: string;
}

/** A zip written the way `zip -r` writes one, from the fields the reader checks. */
function makeZip(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.folder ? `${entry.name.replace(/\/$/, '')}/` : entry.name);
    const data = Buffer.from(entry.data ?? '');
    const stored = entry.deflate ? deflateRawSync(data) : data;
    const fields = (header: Buffer, at: number): void => {
      header.writeUInt16LE(0x800, at);
      header.writeUInt16LE(entry.deflate ? 8 : 0, at + 2);
      header.writeUInt32LE(entry.crc ?? crc32(data), at + 8);
      header.writeUInt32LE(stored.length, at + 12);
      header.writeUInt32LE(entry.declaredSize ?? data.length, at + 16);
      header.writeUInt16LE(name.length, at + 20);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    fields(local, 6);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    fields(central, 8);
    central.writeUInt32LE(((entry.unixMode ?? (entry.folder ? 0o40755 : 0o100644)) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, stored);
    centrals.push(central, name);
    offset += local.length + name.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A gzip-compressed ustar archive, written header by header. */
function makeTarGz(entries: Entry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.folder || entry.tarType ? '' : (entry.data ?? ''));
    const header = Buffer.alloc(512);
    header.write(entry.folder ? `${entry.name.replace(/\/$/, '')}/` : entry.name, 0, 100);
    header.write(entry.folder ? '0000755\0' : '0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
    header.write('00000000000\0', 136);
    header.write(entry.folder ? '5' : (entry.tarType ?? '0'), 156);
    if (entry.tarType) header.write(String(entry.data ?? ''), 157, 100);
    header.write('ustar\0', 257);
    header.write('00', 263);
    header.fill(' ', 148, 156);
    const sum = header.reduce((total, byte) => total + byte, 0);
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** The files of a web vault build, under `prefix`. */
function release(version: string, prefix = '', extra: Entry[] = []): Entry[] {
  return [
    ...(prefix ? [{ name: prefix, folder: true }] : []),
    { name: `${prefix}index.html`, data: `<!doctype html><title>web vault ${version}</title>`, deflate: true },
    { name: `${prefix}version.json`, data: JSON.stringify({ version }), deflate: true },
    { name: `${prefix}app`, folder: true },
    { name: `${prefix}app/main.1a2b3c4d.js`, data: 'console.log("vault");'.repeat(200), deflate: true },
    ...extra,
  ];
}

let root: string;
let count = 0;

/** Runs the command with DATA_DIR in a fresh folder (or the one given), as the CLI would. */
async function run(args: string[], env: Record<string, string> = {}, limits?: UnpackLimits): Promise<{ code: number; out: string; err: string }> {
  const stdout = new Output();
  const stderr = new Output();
  const code = await runWebVaultCommand(args, { env: { DATA_DIR: join(root, 'data'), ...env }, io: { stdout, stderr }, ...(limits ? { limits } : {}) });
  return { code, out: stdout.text, err: stderr.text };
}

function file(name: string, content: Buffer): string {
  const path = join(root, `${++count}-${name}`);
  writeFileSync(path, content);
  return path;
}

/** A fresh DATA_DIR for one test. */
function dataDir(): string {
  const dir = join(root, `data-${++count}`);
  mkdirSync(dir);
  return dir;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'strongroom-web-vault-install-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('strongroom web-vault install', () => {
  it("installs Bitwarden's release zip (a build/ folder) into DATA_DIR/web-vault, and the server serves it at /", async () => {
    const data = dataDir();
    const zip = file('web-2024.10.5-selfhosted-COMMERCIAL.zip', makeZip(release('2024.10.5', 'build/', [{ name: 'build/locales/en/messages.json', data: '{}' }])));
    const result = await run(['install', zip], { DATA_DIR: data });
    expect(result.err).toBe('');
    expect(result.code).toBe(WebVaultExitCode.Ok);
    expect(result.out).toContain(`Installed Bitwarden's web vault 2024.10.5 in ${join(data, 'web-vault')}`);
    // The zip is a fake of two files: the version is all the command can vouch for, and it says so.
    expect(result.out).toContain("Version 2024.10.5 matches a release Strongroom was checked with (2024.10: Bitwarden's self-hosted commercial build, by hand");
    expect(result.out).toContain('this command checks no signature, so it cannot tell that these files are that release as published.');
    expect(result.out).not.toContain('checked with this release');
    expect(result.out).toContain('Restart Strongroom');
    expect(readFileSync(join(data, 'web-vault', 'locales', 'en', 'messages.json'), 'utf8')).toBe('{}');
    // Nothing is left beside it: the staging folder was renamed into place and removed.
    expect(readdirSync(data)).toEqual(['web-vault']);

    const server = await startTestServer({ env: { DATA_DIR: data } });
    try {
      expect(server.config.webVaultDir).toBe(join(data, 'web-vault'));
      const page = await server.request('GET', '/');
      expect(page.status).toBe(200);
      expect(page.text).toContain('web vault 2024.10.5');
      expect((await server.request('GET', '/app/main.1a2b3c4d.js')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("installs vaultwarden's tarball (a web-vault/ folder) and says the release was not checked", async () => {
    const data = dataDir();
    const tarball = file('bw_web_v2025.1.2.tar.gz', makeTarGz(release('2025.1.2', 'web-vault/', [{ name: 'web-vault/vw-version.json', data: '{"version":"2025.1.2"}' }])));
    const result = await run(['install', tarball], { DATA_DIR: data });
    expect(result.code).toBe(WebVaultExitCode.Ok);
    expect(result.out).toContain("vaultwarden's bw_web_builds 2025.1.2, a patched build of web vault 2025.1.2");
    expect(result.out).toContain("Strongroom was not checked with version 2025.1.2; the releases checked are 2024.10 (Bitwarden's build).");
    expect(result.out).not.toContain('signature');
    expect(readFileSync(join(data, 'web-vault', 'index.html'), 'utf8')).toContain('2025.1.2');
  });

  it("tells vaultwarden's build of a checked release from the build that was checked", async () => {
    const tarball = file('bw_web_v2024.10.5.tar.gz', makeTarGz(release('2024.10.5', 'web-vault/', [{ name: 'web-vault/vw-version.json', data: '{"version":"2024.10.5"}' }])));
    const result = await run(['install', tarball], { DATA_DIR: dataDir() });
    expect(result.code).toBe(WebVaultExitCode.Ok);
    expect(result.out).toContain("Version 2024.10.5 matches a release Strongroom was checked with in Bitwarden's build (2024.10: ");
    expect(result.out).toContain('), not in this one.');
  });

  it('installs an unpacked folder into WEB_VAULT_DIR, creating it', async () => {
    const folder = join(root, `folder-${++count}`);
    mkdirSync(join(folder, 'app'), { recursive: true });
    writeFileSync(join(folder, 'index.html'), '<title>folder vault</title>');
    writeFileSync(join(folder, 'version.json'), '{"version":"2024.10.2"}');
    writeFileSync(join(folder, 'app', 'main.js'), '1');
    const target = join(root, `elsewhere-${count}`, 'vault');
    const result = await run(['install', folder], { WEB_VAULT_DIR: target });
    expect(result.code).toBe(WebVaultExitCode.Ok);
    expect(result.out).toContain(`web vault 2024.10.2 in ${target}`);
    expect(readFileSync(join(target, 'app', 'main.js'), 'utf8')).toBe('1');
  });

  it('refuses a release without index.html or without version.json, and leaves nothing behind', async () => {
    const data = dataDir();
    const noIndex = file('no-index.zip', makeZip(release('2024.10.5', 'build/').filter((entry) => !entry.name.endsWith('index.html'))));
    const first = await run(['install', noIndex], { DATA_DIR: data });
    expect(first.code).toBe(WebVaultExitCode.Usage);
    expect(first.err).toContain('no index.html at its top nor in build/');

    const noVersion = file('no-version.tar.gz', makeTarGz(release('2024.10.5').filter((entry) => entry.name !== 'version.json')));
    const second = await run(['install', noVersion], { DATA_DIR: data });
    expect(second.code).toBe(WebVaultExitCode.Usage);
    expect(second.err).toContain('no readable version.json');
    expect(readdirSync(data)).toEqual([]);
  });

  it('refuses entries that lead out of the folder: "..", absolute paths, links', async () => {
    const data = dataDir();
    const cases: [string, Buffer, string][] = [
      ['dotdot.zip', makeZip(release('2024.10.5', '', [{ name: '../escaped.js', data: 'x' }])), 'paths with ".." are refused'],
      ['deep-dotdot.tar.gz', makeTarGz(release('2024.10.5', '', [{ name: 'app/../../escaped.js', data: 'x' }])), 'paths with ".." are refused'],
      ['absolute.tar.gz', makeTarGz(release('2024.10.5', '', [{ name: `${root}/escaped.js`, data: 'x' }])), 'absolute paths are refused'],
      ['backslash.zip', makeZip(release('2024.10.5', '', [{ name: '..\\escaped.js', data: 'x' }])), 'backslashes in entry names are refused'],
      ['link.zip', makeZip(release('2024.10.5', '', [{ name: 'linked.js', data: '/etc/passwd', unixMode: 0o120777 }])), 'linked.js is a symbolic link'],
      ['link.tar.gz', makeTarGz(release('2024.10.5', '', [{ name: 'linked.js', data: '/etc/passwd', tarType: '2' }])), 'linked.js is a link'],
      ['hardlink.tar.gz', makeTarGz(release('2024.10.5', '', [{ name: 'hard.js', data: 'index.html', tarType: '1' }])), 'hard.js is a link'],
      ['twice.zip', makeZip(release('2024.10.5', '', [{ name: 'index.html', data: 'again' }])), 'index.html appears twice'],
    ];
    for (const [name, content, message] of cases) {
      const result = await run(['install', file(name, content)], { DATA_DIR: data });
      expect({ name, code: result.code, err: result.err }).toMatchObject({ name, code: WebVaultExitCode.Usage, err: expect.stringContaining(message) });
    }
    const folder = join(root, `linked-folder-${++count}`);
    mkdirSync(folder);
    writeFileSync(join(folder, 'index.html'), 'x');
    writeFileSync(join(folder, 'version.json'), '{"version":"2024.10.5"}');
    symlinkSync('/etc/passwd', join(folder, 'passwd'));
    const linked = await run(['install', folder], { DATA_DIR: data });
    expect(linked.code).toBe(WebVaultExitCode.Usage);
    expect(linked.err).toContain('passwd is a symbolic link');

    expect(existsSync(join(root, 'escaped.js'))).toBe(false);
    expect(readdirSync(data)).toEqual([]);
  });

  it('refuses archives too large to be a web vault: declared, inflated past their word, or too many entries', async () => {
    const data = dataDir();
    const declared = await run(['install', file('declared.zip', makeZip(release('2024.10.5', '', [{ name: 'huge.bin', data: 'x', deflate: true, declaredSize: 2 ** 31 }])))], { DATA_DIR: data });
    expect(declared.code).toBe(WebVaultExitCode.Usage);
    expect(declared.err).toMatch(/declares \d+ bytes unpacked, more than the 1073741824/);

    const bomb = makeZip(release('2024.10.5', '', [{ name: 'bomb.bin', data: Buffer.alloc(1024 * 1024), deflate: true, declaredSize: 100 }]));
    expect(bomb.length).toBeLessThan(10_000);
    const inflated = await run(['install', file('bomb.zip', bomb)], { DATA_DIR: data });
    expect(inflated.code).toBe(WebVaultExitCode.Usage);
    expect(inflated.err).toContain('bomb.bin inflates to more than the 100 bytes it declares');

    const limits = { maxBytes: 64 * 1024, maxEntries: 10 };
    const big = release('2024.10.5', '', [{ name: 'big.bin', data: Buffer.alloc(100 * 1024) }]);
    const bigTar = await run(['install', file('big.tar.gz', makeTarGz(big))], { DATA_DIR: data }, limits);
    expect(bigTar.code).toBe(WebVaultExitCode.Usage);
    expect(bigTar.err).toContain('big.bin: the release unpacks to more than 65536 bytes');

    const many = release('2024.10.5', '', Array.from({ length: 10 }, (_, i) => ({ name: `locale-${i}.json`, data: '{}' })));
    const manyZip = await run(['install', file('many.zip', makeZip(many))], { DATA_DIR: data }, limits);
    expect(manyZip.err).toContain('the archive has 14 entries, more than the 10');
    const manyTar = await run(['install', file('many.tar.gz', makeTarGz(many))], { DATA_DIR: data }, limits);
    expect(manyTar.err).toContain('more than 10 entries');
    expect(readdirSync(data)).toEqual([]);
  });

  it('refuses a zip entry that fails its CRC-32 check or whose stored sizes disagree', async () => {
    const data = dataDir();
    const damaged = await run(['install', file('damaged.zip', makeZip(release('2024.10.5', '', [{ name: 'damaged.js', data: 'x', deflate: true, crc: 1 }])))], { DATA_DIR: data });
    expect(damaged.code).toBe(WebVaultExitCode.Usage);
    expect(damaged.err).toContain('damaged.js fails its CRC-32 check');
    const stored = await run(['install', file('stored.zip', makeZip(release('2024.10.5', '', [{ name: 'stored.js', data: 'x', declaredSize: 2 }])))], { DATA_DIR: data });
    expect(stored.code).toBe(WebVaultExitCode.Usage);
    expect(stored.err).toContain('not a readable zip archive');
    expect(readdirSync(data)).toEqual([]);
  });

  it('replaces an installed web vault only with --force, keeping it as web-vault.previous', async () => {
    const data = dataDir();
    const vault = join(data, 'web-vault');
    const zip = (version: string): string => file(`web-${version}.zip`, makeZip(release(version, 'build/')));
    expect((await run(['install', zip('2024.10.1')], { DATA_DIR: data })).code).toBe(WebVaultExitCode.Ok);

    const refused = await run(['install', zip('2024.10.2')], { DATA_DIR: data });
    expect(refused.code).toBe(WebVaultExitCode.Refused);
    expect(refused.err).toContain(`${vault} already holds a web vault (2024.10.1); run again with --force`);
    expect(readFileSync(join(vault, 'version.json'), 'utf8')).toContain('2024.10.1');

    const forced = await run(['install', zip('2024.10.2'), '--force'], { DATA_DIR: data });
    expect(forced.code).toBe(WebVaultExitCode.Ok);
    expect(forced.out).toContain(`The web vault it replaced (2024.10.1) is kept in ${vault}.previous.`);
    expect(readFileSync(join(vault, 'version.json'), 'utf8')).toContain('2024.10.2');

    // A bad release changes nothing, even with --force.
    const bad = await run(['install', file('bad.zip', makeZip([{ name: 'index.html', data: 'x' }])), '--force'], { DATA_DIR: data });
    expect(bad.code).toBe(WebVaultExitCode.Usage);
    expect(readFileSync(join(vault, 'version.json'), 'utf8')).toContain('2024.10.2');

    expect((await run(['install', '--force', zip('2024.10.3')], { DATA_DIR: data })).code).toBe(WebVaultExitCode.Ok);
    expect(readFileSync(join(vault, 'version.json'), 'utf8')).toContain('2024.10.3');
    expect(readFileSync(join(`${vault}.previous`, 'version.json'), 'utf8')).toContain('2024.10.2');
    expect(readdirSync(data).sort()).toEqual(['web-vault', 'web-vault.previous']);
  });

  it('answers usage errors with 2 and --help with 0', async () => {
    expect(await run([])).toMatchObject({ code: WebVaultExitCode.Usage, out: '', err: expect.stringContaining('strongroom web-vault install') });
    expect((await run(['--help'])).out).toContain('strongroom web-vault install <zip-or-folder> [--force]');
    // The asset name of dani-garcia/bw_web_builds releases, as the docs and the landing page give it.
    expect((await run(['--help'])).out).toContain("vaultwarden's bw_web_v<version>.tar.gz");
    expect((await run(['install', '--help'])).code).toBe(WebVaultExitCode.Ok);
    expect((await run(['upgrade'])).err).toContain('Unknown web-vault command "upgrade"');
    expect((await run(['install'])).err).toContain('Name the web vault release to install');
    expect((await run(['install', 'a.zip', '--yes'])).err).toContain('Unknown option "--yes"');
    const missing = await run(['install', join(root, 'missing.zip')]);
    expect(missing.code).toBe(WebVaultExitCode.Usage);
    expect(missing.err).toBe(`Cannot install ${join(root, 'missing.zip')}: there is no such file or folder.\n`);
    const notes = file('notes.txt', Buffer.from('hello'));
    const notArchive = await run(['install', notes]);
    expect(notArchive.err).toBe(`Cannot install ${notes}: it is not a zip archive, a gzip-compressed tar archive or a folder.\n`);
    const notTar = await run(['install', file('notes.tar.gz', gzipSync(Buffer.from('hello '.repeat(200))))]);
    expect(notTar).toMatchObject({ code: WebVaultExitCode.Usage, err: expect.stringContaining('not a readable tar archive') });
    const badSetting = await run(['install', 'a.zip'], { PORT: 'eighty' });
    expect(badSetting.code).toBe(WebVaultExitCode.Usage);
    expect(badSetting.err).toContain('PORT');
  });
});

describe('the checked web vault releases', () => {
  it('match a release cycle, ignoring a leading v and build metadata', () => {
    expect(checkedReleases('2024.10.5').map((release) => release.version)).toEqual(['2024.10']);
    expect(checkedReleases('v2024.10.0+abc1234').map((release) => release.version)).toEqual(['2024.10']);
    expect(checkedReleases('2024.1.0')).toEqual([]);
    expect(checkedReleases('2024.100.0')).toEqual([]);
  });
});
