import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { ConfigError, webVaultDirOf } from '../config/config.js';
import { fileProblem, processUser, remedyOf } from '../config/file-problems.js';
import { readSettings } from '../config/load.js';
import { checkedReleases, CHECKED_WEB_VAULT_RELEASES } from '../features/web-vault/checked-versions.js';
import { causeOf, UsageError } from '../shared/startup-error.js';
import { DEFAULT_LIMITS, sourceKind, unpack, type SourceKind, type UnpackLimits } from './web-vault-unpack.js';
import { BadArchive } from './web-vault-zip.js';

export const WEB_VAULT_USAGE = `Usage:
  strongroom web-vault install <zip-or-folder> [--force]
      Checks a web vault release and unpacks it into WEB_VAULT_DIR, or DATA_DIR/web-vault when
      that is not set: Bitwarden's release zip (web-<version>-selfhosted-COMMERCIAL.zip from the
      web-v* releases of github.com/bitwarden/clients), vaultwarden's bw_web_v<version>.tar.gz
      (github.com/dani-garcia/bw_web_builds), or a folder holding an unpacked one. It must have
      index.html and version.json at its top or in its one top folder; links, absolute paths,
      "..", more than 50000 entries or 1 GiB unpacked are refused. Says the version and whether
      Strongroom was checked with a release of that version; the version is read from
      version.json, and no signature or checksum is checked, so download the release from its
      project's release page. An installed web vault is replaced only with --force, and is then
      kept as <folder>.previous (an older .previous is deleted). Restart the server to serve it.

Exit codes: 0 done, 1 refused (a web vault is installed and --force was not given),
  2 usage error, bad archive or unwritable folder, or invalid configuration, 70 internal error.`;

export const WebVaultExitCode = { Ok: 0, Refused: 1, Usage: 2, Internal: 70 } as const;

export interface WebVaultCommandDeps {
  /** The settings' sources: the environment over `.env`. */
  env: NodeJS.ProcessEnv;
  io: { stdout: Writable; stderr: Writable };
  limits?: UnpackLimits;
}

export interface InstalledWebVault {
  target: string;
  version: string;
  /** The version of vaultwarden's bw_web_builds, when the release is one of theirs. */
  vaultwardenBuild: string | null;
  kind: SourceKind;
  /** Where the web vault it replaced was moved, and its version. */
  previous: { path: string; version: string | null } | null;
}

/** An installation the operator's own state refuses (exit code 1). */
class InstallRefused extends Error {}

/** `strongroom web-vault …`: its exit code; it prints what it has to say itself. */
export async function runWebVaultCommand(argv: readonly string[], deps: WebVaultCommandDeps): Promise<number> {
  const { stdout, stderr } = deps.io;
  let given = '';
  try {
    const [sub, ...rest] = argv;
    if (sub === undefined) throw new UsageError(WEB_VAULT_USAGE);
    if (sub === '--help' || sub === '-h' || sub === 'help') {
      stdout.write(`${WEB_VAULT_USAGE}\n`);
      return WebVaultExitCode.Ok;
    }
    if (sub !== 'install') throw new UsageError(`Unknown web-vault command "${sub}".\n${WEB_VAULT_USAGE}`);
    const { source, force, help } = parseInstallArgs(rest);
    given = source;
    if (help) {
      stdout.write(`${WEB_VAULT_USAGE}\n`);
      return WebVaultExitCode.Ok;
    }
    const { settings } = readSettings(deps.env);
    const target = webVaultDirOf(settings);
    const installed = await installWebVault(resolve(source), target, { force, limits: deps.limits ?? DEFAULT_LIMITS });
    stdout.write(describeInstall(installed));
    return WebVaultExitCode.Ok;
  } catch (error) {
    if (error instanceof InstallRefused) {
      stderr.write(`${error.message}\n`);
      return WebVaultExitCode.Refused;
    }
    if (error instanceof BadArchive) {
      stderr.write(`${refusal(given, error.message)}\n`);
      return WebVaultExitCode.Usage;
    }
    if (error instanceof UsageError || error instanceof ConfigError) {
      stderr.write(`${error.message}\n`);
      return WebVaultExitCode.Usage;
    }
    // A file-system refusal (permissions, a full disk) is the operator's to fix, not a bug.
    const failed = error as NodeJS.ErrnoException;
    if (typeof failed.code === 'string' && failed.syscall) {
      stderr.write(`${refusal(given, `${failed.path ? `${failed.path}: ` : ''}${causeOf(error)}; nothing was installed`)}\n`);
      return WebVaultExitCode.Usage;
    }
    stderr.write(`The web-vault command failed unexpectedly: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return WebVaultExitCode.Internal;
  }
}

/**
 * A refused installation as a sentence naming the release the operator gave: the archive's own
 * problems are told in terms of its entries, which alone do not say which download was wrong.
 */
function refusal(source: string, problem: string): string {
  const text = `Cannot install ${source}: ${problem}`;
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

function parseInstallArgs(args: readonly string[]): { source: string; force: boolean; help: boolean } {
  let source: string | undefined;
  let force = false;
  for (const arg of args) {
    if (arg === '--help' || arg === '-h') return { source: '', force, help: true };
    if (arg === '--force') force = true;
    else if (arg.startsWith('-')) throw new UsageError(`Unknown option "${arg}".\n${WEB_VAULT_USAGE}`);
    else if (source === undefined) source = arg;
    else throw new UsageError(`Give install one zip, tar.gz or folder; "${arg}" is one too many.`);
  }
  if (source === undefined) throw new UsageError(`Name the web vault release to install: a zip, a tar.gz or a folder.\n${WEB_VAULT_USAGE}`);
  return { source, force, help: false };
}

/**
 * Unpacks and checks `source` in a temporary folder next to `target`, then renames it into place,
 * so that the folder the server reads is never half written: a refused or failed installation
 * leaves `target` as it was.
 */
async function installWebVault(source: string, target: string, options: { force: boolean; limits?: UnpackLimits }): Promise<InstalledWebVault> {
  if (!existsSync(source)) throw new BadArchive('there is no such file or folder');
  const current = existsSync(target) || isLink(target);
  if (current && !options.force) {
    const version = readVersion(target);
    throw new InstallRefused(
      `${target} already holds a web vault${version ? ` (${version})` : ''}; run again with --force to replace it (the current one is then kept as ${target}.previous).`,
    );
  }
  const kind = await sourceKind(source);
  const parent = dirname(target);
  let staging: string;
  try {
    mkdirSync(parent, { recursive: true });
    staging = mkdtempSync(join(parent, `.${basename(target)}.installing-`));
  } catch (error) {
    const problem = fileProblem(parent, 'write', error);
    throw new BadArchive(`cannot write next to ${target}: ${problem}; ${remedyOf(problem, 'write')} WEB_VAULT_DIR or DATA_DIR to a folder ${processUser()} may write`);
  }
  try {
    const unpacked = join(staging, 'unpacked');
    mkdirSync(unpacked);
    await unpack(source, kind, unpacked, options.limits ?? DEFAULT_LIMITS);
    const root = releaseRoot(unpacked);
    const version = readVersion(root);
    if (version === null) throw new BadArchive('the release has no readable version.json ({"version": "…"}) next to its index.html; is it a web vault build?');
    const vaultwardenBuild = readVersion(root, 'vw-version.json');
    let previous: InstalledWebVault['previous'] = null;
    if (current) {
      const previousPath = `${target}.previous`;
      previous = { path: previousPath, version: readVersion(target) };
      rmSync(previousPath, { recursive: true, force: true });
      renameSync(target, previousPath);
      try {
        renameSync(root, target);
      } catch (error) {
        renameSync(previousPath, target);
        throw error;
      }
    } else {
      renameSync(root, target);
    }
    return { target, version, vaultwardenBuild, kind, previous };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The folder of the release that holds index.html: the top of the archive, or its one top folder
 * (`build/` in Bitwarden's zip, `web-vault/` in vaultwarden's tarball).
 */
function releaseRoot(unpacked: string): string {
  if (existsSync(join(unpacked, 'index.html'))) return unpacked;
  const top = readdirOrEmpty(unpacked);
  const only = top.length === 1 ? join(unpacked, top[0] ?? '') : null;
  if (only && lstatSync(only).isDirectory() && existsSync(join(only, 'index.html'))) return only;
  throw new BadArchive(
    `the release has no index.html at its top${only ? ` nor in ${basename(only)}/` : ''}; a web vault build has one (Bitwarden's zip under build/, vaultwarden's tarball under web-vault/)`,
  );
}

function readdirOrEmpty(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** The `version` of a web vault's version.json (or vw-version.json), or null. */
function readVersion(folder: string, file = 'version.json'): string | null {
  try {
    const parsed = JSON.parse(readFileSync(join(folder, file), 'utf8')) as unknown;
    const version = (parsed as { version?: unknown } | null)?.version;
    return typeof version === 'string' && version.trim() !== '' && version.length <= 100 ? version.trim() : null;
  } catch {
    return null;
  }
}

/** What the operator reads after an installation. */
function describeInstall(installed: InstalledWebVault): string {
  const build = installed.vaultwardenBuild ? `vaultwarden's bw_web_builds ${installed.vaultwardenBuild}, a patched build of` : "Bitwarden's";
  const matching = checkedReleases(installed.version);
  const checked = matching.find((release) => release.build === (installed.vaultwardenBuild ? 'vaultwarden' : 'bitwarden'));
  const otherBuild = matching[0];
  const checkedList = CHECKED_WEB_VAULT_RELEASES.map((release) => `${release.version} (${release.build === 'bitwarden' ? "Bitwarden's build" : "vaultwarden's build"})`).join(', ');
  const lines = [
    `Installed ${build} web vault ${installed.version} in ${installed.target}.`,
    checked
      ? `Version ${installed.version} matches a release Strongroom was checked with (${checked.version}: ${checked.how}).`
      : otherBuild
        ? `Version ${installed.version} matches a release Strongroom was checked with in ${otherBuild.build === 'bitwarden' ? "Bitwarden's" : "vaultwarden's"} build (${otherBuild.version}: ${otherBuild.how}), not in this one.`
        : `Strongroom was not checked with version ${installed.version}; the releases checked are ${checkedList}. Most pages should work; see docs/web-vault.md for what does not.`,
  ];
  // The version is all the command knows of the files: it says so rather than vouch for a build.
  if (otherBuild) lines.push('The version is read from version.json; this command checks no signature, so it cannot tell that these files are that release as published.');
  if (installed.previous) lines.push(`The web vault it replaced${installed.previous.version ? ` (${installed.previous.version})` : ''} is kept in ${installed.previous.path}.`);
  lines.push('Restart Strongroom to serve it: the server reads the web vault folder when it starts.', '');
  return lines.join('\n');
}
