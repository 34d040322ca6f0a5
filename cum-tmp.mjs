const rss = () => { globalThis.gc(); globalThis.gc(); return process.memoryUsage().rss; };
const mb = (n) => (n / 1048576).toFixed(1);
let last = rss();
console.log('node alone', mb(last));
for (const m of process.argv.slice(2)) {
  const t = performance.now();
  await import(m);
  const now = rss();
  console.log(`${m}\t+${mb(now - last)}\t= ${mb(now)}\t${(performance.now()-t).toFixed(0)} ms`);
  last = now;
}
