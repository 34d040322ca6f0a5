/**
 * What the profiling benchmarks share: a process's CPU time from /proc (far steadier than
 * throughput on a shared machine) and the self time per function of a `--cpu-prof` profile.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function (name, file and line), largest first. */
export function selfTimes(profile: Profile): [string, number][] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    const where = frame.url ? ` ${frame.url.replace(/^.*node_modules\//, '').replace(/^.*\/src\//, 'src/')}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'}${where}`;
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...totals].sort((a, b) => b[1] - a[1]);
}

/** Prints the `top` functions by self time of the largest profile in `dir` (the main thread's; tsx's loader thread writes one too). */
export function printProfile(dir: string, top = 40): void {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  if (!file) return;
  const times = selfTimes(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile);
  const total = times.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(`profile ${join(dir, file)}: ${total.toFixed(0)} ms sampled`);
  for (const [name, ms] of times.slice(0, top)) console.log(`${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${name}`);
}
