import { describe, expect, it } from 'vitest';
import { limitedResolver, type ResolvedAddress } from './outbound-address.js';

describe('limitedResolver', () => {
  it('runs at most the given lookups at once, queues the next ones in order, and refuses past the queue', async () => {
    const pending: { hostname: string; answer: (a: ResolvedAddress[]) => void }[] = [];
    const resolve = limitedResolver((hostname) => new Promise((answer) => pending.push({ hostname, answer })), 2, 2);
    const results = ['a', 'b', 'c', 'd'].map((name) => resolve(name, 0));
    await expect(resolve('e', 0)).rejects.toMatchObject({ code: 'EAI_AGAIN' });
    await new Promise((r) => setImmediate(r));
    expect(pending.map((p) => p.hostname)).toEqual(['a', 'b']);

    pending[0]!.answer([{ address: '192.0.2.1', family: 4 }]);
    expect(await results[0]).toEqual([{ address: '192.0.2.1', family: 4 }]);
    // A new lookup arriving now waits behind the queued ones: the freed slot went to c.
    const late = resolve('f', 0);
    await new Promise((r) => setImmediate(r));
    expect(pending.map((p) => p.hostname)).toEqual(['a', 'b', 'c']);

    for (const p of pending.slice(1)) p.answer([]);
    await new Promise((r) => setImmediate(r));
    for (const p of pending.slice(3)) p.answer([]);
    await new Promise((r) => setImmediate(r));
    for (const p of pending.slice(5)) p.answer([]);
    await Promise.all([...results, late]);
    expect(pending.map((p) => p.hostname)).toEqual(['a', 'b', 'c', 'd', 'f']);
  });
});
