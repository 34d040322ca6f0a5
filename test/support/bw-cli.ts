/**
 * Harness for driving the official Bitwarden CLI (`@bitwarden/cli`, `bw`) against a
 * test server.
 *
 * Observed behaviour of bw 2026.9.0 that shapes this harness:
 * - It only talks HTTPS, so the server must use the private test CA from ./tls.ts and
 *   the CLI must trust it via NODE_EXTRA_CA_CERTS.
 * - Without BITWARDENCLI_APPDATA_DIR it writes to ~/.config/Bitwarden CLI, so every
 *   harness gets its own temp appdata dir (one CLI "profile" each).
 * - Output has no trailing newline when stdout is a pipe; errors go to stderr with
 *   exit code 1 (e.g. "You are not logged in."). `--raw` on login/unlock prints only
 *   the session key.
 * - With BW_NOINTERACTION=true it never prompts (a prompt would hang a test).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BwRunOptions {
  /** Extra environment variables (applied last, so they win). */
  env?: Record<string, string>;
  /** Written to the CLI's stdin, which is then closed (stdin is always closed). */
  input?: string;
  /** Kill the CLI (SIGKILL) after this long. Default 60 s. */
  timeoutMs?: number;
}

export interface BwRunResult {
  /** Exit code; -1 if the process was killed by a signal (including our timeout). */
  code: number;
  stdout: string;
  stderr: string;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

/** `bw status` output. userEmail/userId are absent (not null) while logged out. */
export interface BwStatus {
  serverUrl: string | null;
  lastSync: string | null;
  userEmail?: string;
  userId?: string;
  status: 'unauthenticated' | 'locked' | 'unlocked';
}

export interface BwCli {
  /** This harness's BITWARDENCLI_APPDATA_DIR (holds data.json). */
  readonly appDataDir: string;
  readonly serverUrl: string;
  /**
   * Session key from the last successful `login`/`unlock`; passed as `--session`
   * to later `run` calls. Cleared by `lock`/`logout`. Assignable for tests that
   * want to simulate a stale or missing session.
   */
  session: string | undefined;
  /** Runs `bw ...args`. Never rejects on a non-zero exit; rejects only if spawning fails. */
  run(args: string[], opts?: BwRunOptions): Promise<BwRunResult>;
  /** `bw config server <url>` (defaults to the harness's serverUrl); throws on failure. */
  configServer(url?: string): Promise<BwRunResult>;
  /** `bw login EMAIL PASSWORD --raw`; on success stores the printed session key. */
  login(email: string, password: string): Promise<BwRunResult>;
  /**
   * `bw login --apikey` with BW_CLIENTID/BW_CLIENTSECRET. The vault stays locked
   * afterwards (the API key cannot derive the user key), so no session is stored;
   * call `unlock` next.
   */
  loginApiKey(clientId: string, clientSecret: string): Promise<BwRunResult>;
  /** `bw unlock PASSWORD --raw`; on success stores the printed session key. */
  unlock(password: string): Promise<BwRunResult>;
  /** `bw lock`; clears the stored session. */
  lock(): Promise<BwRunResult>;
  /** `bw logout`; clears the stored session. */
  logout(): Promise<BwRunResult>;
  /** Parsed `bw status`. */
  status(): Promise<BwStatus>;
  /** Runs the command and JSON-parses stdout; throws (with stderr) on non-zero exit or bad JSON. */
  json<T>(args: string[], opts?: BwRunOptions): Promise<T>;
  /** Kills any still-running CLI processes and removes the appdata dir. */
  dispose(): Promise<void>;
}

export interface CreateBwCliOptions {
  /** Base URL, e.g. https://127.0.0.1:PORT (the CLI derives /api, /identity, /events). */
  serverUrl: string;
  /** PEM file of the CA that signed the server's certificate (TestTls.caPath). */
  caPath: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;

// test/support/ -> project root; resolved from this file so cwd does not matter.
const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BW_CLI_ENTRY = resolve(PROJECT_ROOT, 'node_modules/@bitwarden/cli/build/bw.js');

// Only these variables are inherited. Everything else is dropped on purpose: a stray
// BW_SESSION/BW_RESPONSE/BW_RAW/BW_CLIENTID from the developer's shell would change
// the CLI's output or identity, NODE_OPTIONS from the test runner could inject
// loaders, and proxy variables would route 127.0.0.1 traffic away from the server.
const INHERITED_ENV = ['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'USER', 'SYSTEMROOT'];

export async function createBwCli(opts: CreateBwCliOptions): Promise<BwCli> {
  if (!existsSync(BW_CLI_ENTRY)) {
    throw new Error(`@bitwarden/cli entry not found at ${BW_CLI_ENTRY}; is the devDependency installed?`);
  }
  if (!existsSync(opts.caPath)) {
    throw new Error(`CA file not found: ${opts.caPath}`);
  }
  const appDataDir = await mkdtemp(join(tmpdir(), 'strongroom-bw-'));
  const running = new Set<ChildProcess>();

  const baseEnv: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) baseEnv[name] = value;
  }
  Object.assign(baseEnv, {
    BITWARDENCLI_APPDATA_DIR: appDataDir,
    // Replaces any inherited value: Node accepts only one extra-CA file, and the
    // CLI only ever needs to reach the local test server.
    NODE_EXTRA_CA_CERTS: opts.caPath,
    BW_NOINTERACTION: 'true',
    NO_COLOR: '1',
  });

  const cli: BwCli = {
    appDataDir,
    serverUrl: opts.serverUrl,
    session: undefined,

    run(args, runOpts = {}) {
      const fullArgs = [...args];
      if (cli.session !== undefined && !fullArgs.includes('--session')) {
        fullArgs.push('--session', cli.session);
      }
      const env = { ...baseEnv, ...runOpts.env };
      const timeoutMs = runOpts.timeoutMs ?? DEFAULT_TIMEOUT_MS;

      return new Promise<BwRunResult>((resolvePromise, reject) => {
        const child = spawn(process.execPath, [BW_CLI_ENTRY, ...fullArgs], {
          // Relative paths (export/import files) land in the throwaway dir, not the repo.
          cwd: appDataDir,
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        running.add(child);
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, timeoutMs);

        child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
        child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
        // The CLI may exit before reading stdin; EPIPE there is not a test failure.
        child.stdin.on('error', () => undefined);
        // Always close stdin so a command that falls back to reading it cannot hang.
        child.stdin.end(runOpts.input ?? '');

        child.on('error', (e) => {
          clearTimeout(timer);
          running.delete(child);
          reject(e);
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          running.delete(child);
          let stderr = Buffer.concat(err).toString('utf8');
          if (timedOut) {
            stderr += `\n[bw-cli harness] killed after ${timeoutMs} ms: bw ${redact(args).join(' ')}`;
          }
          resolvePromise({
            code: code ?? -1,
            stdout: Buffer.concat(out).toString('utf8'),
            stderr,
            signal,
            timedOut,
          });
        });
      });
    },

    async configServer(url = opts.serverUrl) {
      const r = await cli.run(['config', 'server', url]);
      if (r.code !== 0) throw new Error(describe(['config', 'server', url], r));
      return r;
    },

    async login(email, password) {
      const r = await cli.run(['login', email, password, '--raw']);
      if (r.code === 0 && r.stdout.trim() !== '') cli.session = r.stdout.trim();
      return r;
    },

    async loginApiKey(clientId, clientSecret) {
      const r = await cli.run(['login', '--apikey'], {
        env: { BW_CLIENTID: clientId, BW_CLIENTSECRET: clientSecret },
      });
      // With BW_NOINTERACTION the CLI still prints a session key here, but it unlocks
      // nothing (the vault is locked until `bw unlock`), so don't keep it.
      if (r.code === 0) cli.session = undefined;
      return r;
    },

    async unlock(password) {
      const r = await cli.run(['unlock', password, '--raw']);
      if (r.code === 0 && r.stdout.trim() !== '') cli.session = r.stdout.trim();
      return r;
    },

    async lock() {
      const r = await cli.run(['lock']);
      if (r.code === 0) cli.session = undefined;
      return r;
    },

    async logout() {
      const r = await cli.run(['logout']);
      // Even on failure ("You are not logged in.") there is no usable session left.
      cli.session = undefined;
      return r;
    },

    async status() {
      const s = await cli.json<unknown>(['status']);
      if (!isBwStatus(s)) {
        throw new Error(`unexpected bw status output: ${JSON.stringify(s)}`);
      }
      return s;
    },

    async json<T>(args: string[], runOpts?: BwRunOptions): Promise<T> {
      const r = await cli.run(args, runOpts);
      if (r.code !== 0) throw new Error(describe(args, r));
      try {
        return JSON.parse(r.stdout) as T;
      } catch (e) {
        const reason = e instanceof Error ? e.message : String(e);
        throw new Error(`bw ${redact(args).join(' ')}: stdout is not JSON (${reason})\n${format(r)}`);
      }
    },

    async dispose() {
      for (const child of running) child.kill('SIGKILL');
      running.clear();
      cli.session = undefined;
      await rm(appDataDir, { recursive: true, force: true });
    },
  };
  return cli;
}

function isBwStatus(v: unknown): v is BwStatus {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    (o.status === 'unauthenticated' || o.status === 'locked' || o.status === 'unlocked') &&
    (o.serverUrl === null || typeof o.serverUrl === 'string')
  );
}

// Passwords and session keys are positional args; keep them out of failure messages.
function redact(args: string[]): string[] {
  const [cmd, ...rest] = args;
  if (cmd === 'login' && rest.length >= 2 && !rest[1]?.startsWith('-')) {
    return [cmd, rest[0] ?? '', '<password>', ...rest.slice(2)];
  }
  if (cmd === 'unlock' && rest.length >= 1 && !rest[0]?.startsWith('-')) {
    return [cmd, '<password>', ...rest.slice(1)];
  }
  return args;
}

function format(r: BwRunResult): string {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

function describe(args: string[], r: BwRunResult): string {
  return `bw ${redact(args).join(' ')} failed: ${format(r)}`;
}
