/**
 * One server process a capacity benchmark can stop and start again on the same port, with the
 * same database and DATA_DIR, as an operator's service manager restarts it; optionally pinned
 * to CPUs with taskset. It runs the built server (dist/main.js), as production does, so that a
 * restart costs what it costs there (harness.ts's servers run the sources through tsx).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { freePort, PROJECT_ROOT } from '../../fleet/fleet.js';

export interface InstanceOptions {
  /** The server's settings (DATABASE_URL, DATA_DIR, TLS files, ...); PORT is set here. */
  env: Record<string, string>;
  /** The authority the server's TLS certificate is signed by; plain HTTP without it. */
  ca?: string;
  /** CPUs to pin the process to (`taskset -c`), e.g. '0'. */
  cpus?: string;
}

export interface Instance {
  url: string;
  /** The running process's id (undefined while stopped). */
  readonly pid: number | undefined;
  /** Starts the process; answers the milliseconds until /api/alive answered. */
  start(): Promise<number>;
  /** SIGTERM; answers the milliseconds until the process exited (its drain). */
  stop(): Promise<number>;
  /** The last lines the process wrote (for a failure's message). */
  tail(): string;
}

export async function createInstance(options: InstanceOptions): Promise<Instance> {
  const port = await freePort();
  const url = `${options.ca ? 'https' : 'http'}://127.0.0.1:${port}`;
  const probe = new Agent({ connect: options.ca ? { ca: options.ca } : {}, keepAliveTimeout: 1 });
  let child: ChildProcess | null = null;
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));

  const answers = async () => {
    try {
      const res = await request(`${url}/api/alive`, { dispatcher: probe, headersTimeout: 1000, bodyTimeout: 1000 });
      await res.body.dump();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  };

  return {
    url,
    get pid() {
      return child?.pid;
    },
    async start() {
      const started = performance.now();
      const command = options.cpus ? ['taskset', '-c', options.cpus, process.execPath] : [process.execPath];
      const proc = spawn(command[0]!, [...command.slice(1), join(PROJECT_ROOT, 'dist/main.js')], {
        cwd: PROJECT_ROOT,
        env: { PATH: process.env.PATH ?? '', ...options.env, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = proc;
      proc.stdout.on('data', keep);
      proc.stderr.on('data', keep);
      while (!(await answers())) {
        if (proc.exitCode !== null) throw new Error(`the server exited with ${proc.exitCode}: ${output}`);
        if (performance.now() - started > 60_000) throw new Error(`the server did not answer in 60 s: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return performance.now() - started;
    },
    async stop() {
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return 0;
      const started = performance.now();
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
      child = null;
      return performance.now() - started;
    },
    tail: () => output,
  };
}
