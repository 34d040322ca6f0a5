import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnswerAbandoned, sectionItemsWriter, type SectionItems, type SpilledItems } from './section-items.js';

/** An item's JSON as sync writes it: the start (opening and shared part), the user's part, a brace. */
const start = (id: string, text: string) => Buffer.from(`{"object":"cipherDetails","id":"${id}","text":"${text}",`);
const user = (mark: string) => `"folderId":"${mark}"`;
const whole = (id: string, text: string, mark: string) => Buffer.concat([start(id, text), Buffer.from(`${user(mark)}}`)]);

const parsed = (items: SectionItems) => JSON.parse(Buffer.concat(items.chunks()).toString()) as { id: string; text: string; folderId: string }[];

/** Items of about `size` bytes each. */
const filler = (size: number, n: number) => `${n}-`.padEnd(size, 'x');

describe('section items', () => {
  it('writes the items array in pages and patches it: replaced in place, hidden, added at the end', () => {
    const writer = sectionItemsWriter();
    // 300 items of 10 KB: three pages of 1 MB and a bit.
    for (let i = 0; i < 300; i++) writer.add(`i${i}`, start(`i${i}`, filler(10_000, i)), user('u'));
    writer.hide('h1');
    const items = writer.finish();
    expect(items.chunks().length).toBeGreaterThan(4);
    expect(items.count).toBe(301);
    expect(items.has('i299') && items.has('h1') && !items.has('nope')).toBe(true);
    const before = parsed(items);
    expect(before.map((x) => x.id)).toEqual(Array.from({ length: 300 }, (_, i) => `i${i}`));

    const patched = items.with(
      new Map([
        ['i0', whole('i0', 'first', 'v')],
        ['i150', null],
        ['i299', whole('i299', 'last', 'v')],
        ['h1', whole('h1', 'shown', 'v')],
        ['new', whole('new', 'added', 'v')],
      ]),
    );
    const after = parsed(patched);
    expect(patched.count).toBe(302);
    expect(after.map((x) => x.id)).toEqual([...before.map((x) => x.id).filter((id) => id !== 'i150'), 'h1', 'new']);
    expect(after[0]).toEqual({ object: 'cipherDetails', id: 'i0', text: 'first', folderId: 'v' });
    expect(after.find((x) => x.id === 'i299')?.text).toBe('last');
    expect(after.find((x) => x.id === 'i1')).toEqual(before[1]);
    // The original is untouched (an answer may still be writing it).
    expect(parsed(items)).toEqual(before);
    expect(items.count).toBe(301);
  });

  it('lets the event loop run between slices of rows, so that reading a large vault does not hold other requests', async () => {
    const writer = sectionItemsWriter();
    let ran = false;
    setImmediate(() => (ran = true));
    writer.add('a', start('a', 'x'), user('u'));
    await writer.pace();
    expect(ran).toBe(true);
    expect(parsed(writer.finish()).map((x) => x.id)).toEqual(['a']);
  });

  it('writes an empty array, and an item larger than a page', () => {
    expect(parsed(sectionItemsWriter().finish())).toEqual([]);
    const writer = sectionItemsWriter();
    writer.add('small', start('small', 'a'), user('u'));
    writer.add('big', start('big', filler(3_000_000, 0)), user('u'));
    writer.add('after', start('after', 'b'), user('u'));
    const items = writer.finish();
    expect(parsed(items).map((x) => x.id)).toEqual(['small', 'big', 'after']);
    const patched = items.with(new Map([['big', whole('big', 'short', 'u')], ['small', null]]));
    expect(parsed(patched).map((x) => [x.id, x.text])).toEqual([['big', 'short'], ['after', 'b']]);
    expect(parsed(patched.with(new Map([['small', whole('small', 'c', 'u')], ['big', null], ['after', null]])))).toEqual([
      { object: 'cipherDetails', id: 'small', text: 'c', folderId: 'u' },
    ]);
  });

  it('equals a section written afresh after any sequence of patches', () => {
    const change = fc.record({ id: fc.nat(40), text: fc.string({ unit: fc.constantFrom('a', 'b', 'é', '€'), maxLength: 400_000 }), hide: fc.boolean(), remove: fc.boolean() });
    fc.assert(
      fc.property(fc.nat(40), fc.array(fc.array(change, { maxLength: 6 }), { maxLength: 5 }), (initial, patches) => {
        const model = new Map<string, { text: string; mark: string } | null>();
        const writer = sectionItemsWriter();
        for (let i = 0; i < initial; i++) {
          writer.add(`i${i}`, start(`i${i}`, filler(i * 20_000, i)), user('u'));
          model.set(`i${i}`, { text: filler(i * 20_000, i), mark: 'u' });
        }
        let items = writer.finish();
        patches.forEach((patch, round) => {
          const changes = new Map<string, Buffer | null>();
          const removed = new Set<string>();
          for (const { id: n, text, hide, remove } of patch) {
            const id = `i${n}`;
            // An item that left the vault is not also changed in the same patch (sync.service.ts lists the vault whole then).
            if (remove && model.has(id) && !changes.has(id)) {
              removed.add(id);
              model.delete(id);
            } else if (!removed.has(id)) {
              changes.set(id, hide ? null : whole(id, text, `r${round}`));
              model.set(id, hide ? null : { text, mark: `r${round}` });
            }
          }
          items = items.with(changes, removed);
        });
        const expected = [...model].flatMap(([id, v]) => (v ? [{ object: 'cipherDetails', id, text: v.text, folderId: v.mark }] : []));
        const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
        expect(parsed(items).sort(byId)).toEqual(expected.sort(byId));
        expect(items.count).toBe(model.size);
        expect(items.ids().sort()).toEqual([...model.keys()].sort());
      }),
      { numRuns: 40 },
    );
  });

  describe('a vault larger than the cache keeps (keepBytes)', () => {
    /** Everything the answer takes from `items`, as text. */
    async function taken(items: SpilledItems): Promise<string> {
      const out: Buffer[] = [];
      for await (const chunk of items) out.push(chunk);
      return Buffer.concat(out).toString();
    }
    /** `writer` given `count` items of 10 KB, waiting for the answer every 20 items, as sync's reading does. */
    async function write(writer: ReturnType<typeof sectionItemsWriter>, count: number) {
      for (let i = 0; i < count; i++) {
        writer.add(`i${i}`, start(`i${i}`, filler(10_000, i)), user('u'));
        if (i % 20 === 19) await writer.pace();
      }
      return writer.finish();
    }

    it('gives the items to the answer as they are written, the same array, and keeps none of them', async () => {
      const writer = sectionItemsWriter({ keepBytes: 1_500_000 });
      const writing = write(writer, 400);
      const text = await taken(await writer.spilled);
      expect((JSON.parse(text) as { id: string }[]).map((x) => x.id)).toEqual(Array.from({ length: 400 }, (_, i) => `i${i}`));
      expect(text).toBe(Buffer.concat((await write(sectionItemsWriter(), 400)).chunks()).toString());
      expect((await writing).count).toBe(0);
    });

    it('keeps a vault under keepBytes whole, and never spills it', async () => {
      const writer = sectionItemsWriter({ keepBytes: 10_000_000 });
      let spilled = false;
      void writer.spilled.then(() => (spilled = true));
      const items = await write(writer, 400);
      await new Promise((resolve) => setImmediate(resolve));
      expect(spilled).toBe(false);
      expect(items.count).toBe(400);
      expect(parsed(items).map((x) => x.id)).toEqual(Array.from({ length: 400 }, (_, i) => `i${i}`));
    });

    it('makes the reading wait while the answer has pages it has not taken', async () => {
      const writer = sectionItemsWriter({ keepBytes: 1 });
      let written = 0;
      const writing = (async () => {
        for (; written < 1000; written++) {
          writer.add(`i${written}`, start(`i${written}`, filler(100_000, written)), user('u'));
          await writer.pace();
        }
        return writer.finish();
      })();
      const pages = (await writer.spilled)[Symbol.asyncIterator]();
      // Until the writing stops for want of room: 20 ms is not always enough on a loaded machine.
      const settled = async () => {
        for (let last = -1; written !== last; ) {
          last = written;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await settled();
      // Four pages of about 1 MB (ten items each) waiting, and the fifth being filled.
      expect(written).toBeLessThan(60);
      const before = written;
      await pages.next(); // `[`
      await pages.next(); // the first page
      for (const end = Date.now() + 2000; written === before && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 5));
      await settled();
      expect(written).toBeGreaterThan(before);
      expect(written).toBeLessThan(before + 20);
      let rest = '';
      for (let next = await pages.next(); !next.done; next = await pages.next()) rest += next.value.toString().slice(0, 1);
      expect((await writing).count).toBe(0);
      expect(rest.endsWith(']')).toBe(true);
    });

    it('stops the reading when the answer is abandoned (the client gone)', async () => {
      const writer = sectionItemsWriter({ keepBytes: 1 });
      const writing = write(writer, 2000);
      const pages = (await writer.spilled)[Symbol.asyncIterator]();
      await pages.next();
      await pages.return?.();
      await expect(writing).rejects.toBeInstanceOf(AnswerAbandoned);
    });

    it('ends a read waiting for a page when the answer is abandoned', async () => {
      const writer = sectionItemsWriter({ keepBytes: 1 });
      // About 1 MB: one page written, the next being filled.
      for (let i = 0; i < 15; i++) writer.add(`i${i}`, start(`i${i}`, filler(100_000, i)), user('u'));
      const pages = (await writer.spilled)[Symbol.asyncIterator]();
      const bytes = async () => {
        const next = await pages.next();
        return next.done ? Buffer.alloc(0) : next.value;
      };
      expect((await bytes()).toString()).toBe('[');
      expect((await bytes()).length).toBeGreaterThan(900_000);
      const waiting = pages.next(); // nothing more written: it waits
      await pages.return?.();
      await expect(waiting).resolves.toEqual({ done: true, value: undefined });
    });

    it('fails the answer when the reading fails', async () => {
      const writer = sectionItemsWriter({ keepBytes: 1 });
      void write(writer, 300);
      const items = await writer.spilled;
      items.fail(new Error('the database went away'));
      await expect(taken(items)).rejects.toThrow('the database went away');
    });
  });
});
