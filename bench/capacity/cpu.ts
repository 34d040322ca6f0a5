/**
 * CPU time of the processes a capacity run involves, from /proc: a process with its children
 * (nginx's workers), and PostgreSQL's backends serving one database. A backend's time is read
 * while it lives: `PostgresCpu` samples every second, so a connection the pool closes during a
 * run takes what it spent until its last sample (at most a second's worth is lost).
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { cpuMsOf as cpuMs } from '../harness.js';

export { cpuMs };

/** `pid` and its children (one level, as nginx's master and workers), in ms. */
export function treeCpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    children = [];
  }
  return cpuMs(pid) + children.reduce((sum, child) => sum + cpuMs(child), 0);
}

/** CPU time the whole machine spent busy (all cores, /proc/stat), in ms: what other people's runs take shows in it. */
export function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: all but idle and iowait are busy.
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) * 10;
}

/** This process's own CPU time (the generator), in ms. */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * The CPU time of the PostgreSQL backends of `databaseUrl`'s database (every client connection
 * and autovacuum worker on it but this sampler's own), summed since `start()`.
 */
export class PostgresCpu {
  private readonly client: pg.Client;
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private started = false;

  constructor(databaseUrl: string) {
    const url = new URL(databaseUrl);
    url.searchParams.delete('options');
    this.client = new pg.Client({ connectionString: url.toString() });
  }

  async open(): Promise<void> {
    await this.client.connect();
    this.timer = setInterval(() => void this.sample().catch(() => undefined), 1000);
  }

  private async sample(): Promise<void> {
    const rows = await this.client.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    for (const { pid } of rows.rows) {
      const ms = cpuMs(pid);
      if (ms === 0 && !this.last.has(pid)) continue;
      // A backend seen first after start() began during the measurement: all of its time counts.
      if (!this.first.has(pid)) this.first.set(pid, this.started ? 0 : ms);
      this.last.set(pid, Math.max(ms, this.last.get(pid) ?? 0));
    }
  }

  /** Begins a measurement: what the backends spent so far is not counted. */
  async start(): Promise<void> {
    this.first.clear();
    this.last.clear();
    this.started = false;
    await this.sample();
    this.started = true;
  }

  /** ms the backends spent since start(). */
  async total(): Promise<number> {
    await this.sample();
    let sum = 0;
    for (const [pid, last] of this.last) sum += last - (this.first.get(pid) ?? 0);
    return sum;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.client.end();
  }
}
