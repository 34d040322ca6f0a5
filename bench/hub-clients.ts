/**
 * Many notifications hub connections held from a child process (bench/notifications-clients.ts:
 * its own event loop and file descriptors), for the benchmarks that need clients online.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { ROOT } from './harness.js';

export interface Clients {
  connect(url: string, tokens: string[], perToken: number): Promise<{ ready: number; failed: number }>;
  latencies(): Promise<number[]>;
  reset(): void;
  stop(): Promise<void>;
  /** The child's process id (for reading its CPU time). */
  pid: number | undefined;
}

export async function startClients(env: Record<string, string> = {}): Promise<Clients> {
  const child: ChildProcess = fork(`${ROOT}bench/notifications-clients.ts`, [], { execArgv: ['--import', 'tsx'], cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
  const next = <T>(key: string) =>
    new Promise<T>((resolve) => {
      const listener = (message: Record<string, unknown>) => {
        if (!(key in message)) return;
        child.off('message', listener);
        resolve(message as T);
      };
      child.on('message', listener);
    });
  await next('started');
  return {
    pid: child.pid,
    async connect(url, tokens, perToken) {
      const ready = next<{ ready: number; failed: number }>('ready');
      child.send({ connect: { url, tokens, perToken } });
      return ready;
    },
    async latencies() {
      const report = next<{ latencies: number[] }>('latencies');
      child.send({ report: true });
      return (await report).latencies;
    },
    reset() {
      child.send({ reset: true });
    },
    stop() {
      return new Promise((resolve) => {
        child.on('exit', () => resolve());
        child.send({ exit: true });
      });
    },
  };
}
