import { databaseFor, startHttpsServer, cpuMsOf } from '../harness.js';
import { createClient } from './client.js';
import { seedPopulation } from './population.js';
import { vaultSizeOf } from './model.js';
const engine = process.argv[2] ?? 'sqlite';
const db = await databaseFor(engine);
const s = await startHttpsServer(db.url, { PASSWORD_ITERATIONS: '600000', DEPLOYMENT: 'cloud', MAX_CONNECTIONS_PER_IP: '0' });
const c = createClient(s.url, s.ca);
const pop = await seedPopulation(c, db.url, Number(process.env.P ?? 1000), (l) => console.error(l));
for (const size of [300, 2000, 20000]) {
  const people = pop.people.filter((p) => vaultSizeOf(p.index) === size).slice(0, size === 20000 ? 3 : 20);
  const lat: number[] = []; let bytes = 0;
  const cpu0 = cpuMsOf(s.pid);
  for (const p of people) { const t = performance.now(); const text = await c.send<string>('GET', '/api/sync', { token: p.token, raw: true }); lat.push(performance.now() - t); bytes += text.length; }
  const cpu = (cpuMsOf(s.pid) - cpu0) / people.length;
  // again (warm)
  const lat2: number[] = [];
  for (const p of people) { const t = performance.now(); await c.send<string>('GET', '/api/sync', { token: p.token, raw: true }); lat2.push(performance.now() - t); }
  lat.sort((a,b)=>a-b); lat2.sort((a,b)=>a-b);
  console.log(`${engine} size ${size}: n=${people.length} cold p50 ${lat[Math.floor(lat.length/2)]!.toFixed(0)} max ${lat.at(-1)!.toFixed(0)} ms, cpu ${cpu.toFixed(0)} ms/sync, ${(bytes/people.length/1e6).toFixed(2)} MB; warm p50 ${lat2[Math.floor(lat2.length/2)]!.toFixed(0)} max ${lat2.at(-1)!.toFixed(0)}`);
}
await c.close(); await s.stop(); await db.drop();
