/**
 * Runs the server program (the build in `dist/`, which `npm start` and the `strongroom` command run,
 * here without their V8 memory flags, or `src/main.ts` through tsx, as `npm run dev` does) as a child process, for tests of what an
 * operator sees: exit codes, the lines printed, signals. Every child started here is killed by
 * `killPrograms()`, which a test file calls after each test.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const PROJECT_ROOT = new URL('../../', import.meta.url).pathname;
// By URL, so that the program also starts from a working directory outside the project.
const TSX = pathToFileURL(join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const running = new Set<ChildProcessWithoutNullStreams>();

/**
 * The arguments to `node` that run the server program. The build by default: it is what operators
 * run, and it starts in about a second where tsx takes five or more (it compiles and loads some 400
 * modules through a loader thread). test/global-setup.ts builds `dist/` when `src/` changed.
 */
export function programArgs(program: 'source' | 'build' = 'build'): string[] {
  return program === 'build' ? [join(PROJECT_ROOT, 'dist/main.js')] : ['--import', TSX, join(PROJECT_ROOT, 'src/main.ts')];
}

export interface Program {
  proc: ChildProcessWithoutNullStreams;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Standard error, then standard output. */
  output(): string;
}

export function startProgram(
  env: Record<string, string>,
  /** `source`: `src/main.ts` through tsx, as `npm run dev` runs it; the build otherwise. */
  options: { cwd?: string; args?: string[]; readStdout?: boolean; program?: 'source' | 'build' } = {},
): Program {
  const proc = spawn(process.execPath, [...programArgs(options.program), ...(options.args ?? [])], {
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { PATH: process.env.PATH, ...env },
  });
  running.add(proc);
  proc.once('close', () => running.delete(proc));
  let stdout = '';
  let stderr = '';
  // A test of a reader that stops reading leaves standard output alone.
  if (options.readStdout !== false) proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('close', resolve));
  return { proc, exited, stdout: () => stdout, stderr: () => stderr, output: () => stderr + stdout };
}

export function killPrograms(): void {
  for (const proc of running) proc.kill('SIGKILL');
}

export async function waitFor(predicate: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A loopback port nothing listens on now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}
