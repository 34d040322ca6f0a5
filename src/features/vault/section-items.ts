import { yieldToLoop } from '../../shared/work-slices.js';

/**
 * The items of a vault section as sync sends them, in pages of about 1 MB of JSON that remember
 * where each item is, so that a change is applied by rebuilding the pages holding the changed
 * items, not the whole array (sync-vault.ts patches a user's cached section with the items
 * written since; see migration 0020). Immutable: a patch gives a new SectionItems sharing the
 * untouched pages, so an answer being written from the old one is never changed under it.
 *
 * An item's JSON is `{"object":"cipherDetails",` + its shared part (item-json-cache.ts) + the
 * user's part + `}`; a page holds its items' JSON joined by commas.
 */

/** Bytes of JSON in a page at most, unless one item is larger. */
const PAGE_BYTES = 1024 * 1024;
const COMMA = 0x2c;
const OPEN = Buffer.from('[');
const SEPARATOR = Buffer.from(',');
const CLOSE = Buffer.from(']');

interface ItemPage {
  /** The items' ids, in the order of their JSON in `bytes`. */
  readonly ids: readonly string[];
  /** Where each item's JSON ends in `bytes` (the next one starts after a comma). */
  readonly ends: readonly number[];
  readonly bytes: Buffer;
  /** Position of each id in `ids`. */
  readonly index: ReadonlyMap<string, number>;
}

interface Item {
  id: string;
  json: Buffer;
}

function page(ids: readonly string[], ends: readonly number[], bytes: Buffer): ItemPage {
  return { ids, ends, bytes, index: new Map(ids.map((id, i) => [id, i])) };
}

/** Item `i` of a page: a view of the page's bytes, no copy. */
function itemAt(p: ItemPage, i: number): Item {
  return { id: p.ids[i]!, json: p.bytes.subarray(i === 0 ? 0 : p.ends[i - 1]! + 1, p.ends[i]) };
}

/** `items` packed into pages, each in a buffer of exactly its size. */
function join(items: readonly Item[]): ItemPage[] {
  const pages: ItemPage[] = [];
  for (let from = 0; from < items.length; ) {
    let size = items[from]!.json.length;
    let to = from + 1;
    while (to < items.length && size + 1 + items[to]!.json.length <= PAGE_BYTES) size += 1 + items[to++]!.json.length;
    const bytes = Buffer.allocUnsafeSlow(size);
    const ids: string[] = [];
    const ends: number[] = [];
    let used = 0;
    for (let i = from; i < to; i++) {
      if (i > from) bytes[used++] = COMMA;
      used += items[i]!.json.copy(bytes, used);
      ids.push(items[i]!.id);
      ends.push(used);
    }
    pages.push(page(ids, ends, bytes));
    from = to;
  }
  return pages;
}

export class SectionItems {
  constructor(
    private readonly pages: readonly ItemPage[],
    /** Items of the vault not sent to this client (SSH keys for older clients), by id. */
    private readonly hidden: ReadonlySet<string>,
  ) {}

  /** Items of the vault, sent or hidden. */
  get count(): number {
    return this.pages.reduce((sum, p) => sum + p.ids.length, this.hidden.size);
  }

  /** Whether the item is in the vault (sent or hidden). */
  has(id: string): boolean {
    return this.hidden.has(id) || this.pages.some((p) => p.index.has(id));
  }

  /** The `ciphers` array of sync as JSON bytes: the pages between brackets and commas. */
  chunks(): Buffer[] {
    const out: Buffer[] = [OPEN];
    this.pages.forEach((p, i) => out.push(...(i > 0 ? [SEPARATOR, p.bytes] : [p.bytes])));
    out.push(CLOSE);
    return out;
  }

  /** The ids of the items of the vault, sent or hidden. */
  ids(): string[] {
    return [...this.pages.flatMap((p) => p.ids), ...this.hidden];
  }

  /**
   * These items with `changes` applied: each id's new JSON, or null for an item no longer sent
   * (hidden); and without the `removed` ones (items that left the vault). An item already here
   * keeps its place; a new one goes at the end. Only the pages holding changed or removed items
   * (and the last one, when items are added) are rebuilt.
   */
  with(changes: ReadonlyMap<string, Buffer | null>, removed: ReadonlySet<string> = new Set()): SectionItems {
    const left = new Map(changes);
    const hidden = new Set([...this.hidden].filter((id) => !removed.has(id)));
    const pages = this.pages.flatMap((p) => {
      const here = [...left.keys()].filter((id) => p.index.has(id));
      if (here.length === 0 && (removed.size === 0 || !p.ids.some((id) => removed.has(id)))) return [p];
      const items: Item[] = [];
      for (let i = 0; i < p.ids.length; i++) {
        const id = p.ids[i]!;
        if (removed.has(id)) continue;
        const json = left.has(id) ? left.get(id) : itemAt(p, i).json;
        if (json) items.push({ id, json });
        else hidden.add(id);
      }
      for (const id of here) left.delete(id);
      return join(items);
    });
    const added: Item[] = [];
    for (const [id, json] of left) {
      if (json) {
        hidden.delete(id);
        added.push({ id, json });
      } else hidden.add(id);
    }
    if (added.length > 0) {
      const last = pages.pop();
      const kept = last ? last.ids.map((_, i) => itemAt(last, i)) : [];
      pages.push(...join([...kept, ...added]));
    }
    return new SectionItems(pages, hidden);
  }
}

/** Pages an answer being sent may have waiting before the writer waits for it (SpilledItems.room). */
const PAGES_AHEAD = 4;

/** The reading of a spilled vault stopped because its answer is no longer being sent (the client went away). */
export class AnswerAbandoned extends Error {
  constructor() {
    super('the sync answer was abandoned before its items were all read');
  }
}

/**
 * The items array of a vault too large to be kept (see sectionItemsWriter's `keepBytes`), given
 * to the answer page by page while the vault is still being read: it starts with the pages
 * written before the vault passed the budget, each page is dropped once the answer has taken it,
 * and the reading waits (`room`) while PAGES_AHEAD pages are not yet taken. However large the
 * vault, it holds at most about the budget and then PAGES_AHEAD pages. An async iterator of the
 * array's bytes: `[`, the pages with commas between them, `]`. `return()` (the answer's stream
 * destroyed) abandons it: the pages are dropped, a pending `next()` ends, and the reading stops
 * at its next `room` with AnswerAbandoned.
 */
export class SpilledItems implements AsyncIterable<Buffer> {
  /** Pages written, not yet taken. */
  #pages: Buffer[];
  /** Bytes ready to be taken before the next page: `[`, then a comma before each page but the first. */
  #ready: Buffer[] = [OPEN];
  /** Every page written (`end`), and the closing bracket sent after the last. */
  #writerDone = false;
  #closeSent = false;
  #abandoned = false;
  #failure: { error: unknown } | undefined;
  #firstTaken = false;
  /** The answer waiting for a page, and the reading waiting for room. */
  #taker: (() => void) | undefined;
  #writer: (() => void) | undefined;

  constructor(pages: Buffer[]) {
    this.#pages = pages;
  }

  /** A page written (after those before it). */
  push(bytes: Buffer): void {
    if (this.#abandoned) return;
    this.#pages.push(bytes);
    this.#wake();
  }

  /** Every page written: the array closes after the last. */
  end(): void {
    this.#writerDone = true;
    this.#wake();
  }

  /** The reading failed: the answer fails with `error` at its next read. */
  fail(error: unknown): void {
    this.#failure ??= { error };
    this.#wake();
  }

  /** Resolves once fewer than PAGES_AHEAD pages wait; rejects with AnswerAbandoned when the answer is gone. */
  async room(): Promise<void> {
    while (this.#pages.length >= PAGES_AHEAD && !this.#abandoned) await new Promise<void>((resolve) => (this.#writer = resolve));
    if (this.#abandoned) throw new AnswerAbandoned();
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.#next(),
      return: () => {
        this.#abandoned = true;
        this.#pages = [];
        this.#ready = [];
        this.#writer?.();
        this.#wake();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  async #next(): Promise<IteratorResult<Buffer>> {
    for (;;) {
      if (this.#failure) throw this.#failure.error;
      const ready = this.#ready.shift();
      if (ready) return { done: false, value: ready };
      const page = this.#pages.shift();
      if (page) {
        this.#ready.push(...(this.#firstTaken ? [SEPARATOR, page] : [page]));
        this.#firstTaken = true;
        const writer = this.#writer;
        this.#writer = undefined;
        writer?.();
        continue;
      }
      if (this.#abandoned || this.#closeSent) return { done: true, value: undefined };
      if (this.#writerDone) {
        this.#closeSent = true;
        return { done: false, value: CLOSE };
      }
      await new Promise<void>((resolve) => (this.#taker = resolve));
    }
  }

  #wake(): void {
    const taker = this.#taker;
    this.#taker = undefined;
    taker?.();
  }
}

/**
 * Builds a SectionItems item by item, writing each item's JSON straight into the current page,
 * so that a vault's items are copied once and never held as one large string.
 *
 * With `keepBytes`, a vault whose pages pass that many bytes, counting `itemBytes` more for each
 * item (what the sync cache counts: more than it would keep), is not held whole: `spilled`
 * resolves with a SpilledItems holding the pages written so far (`spilledItems()` answers it from
 * then on), the pages written after go to it, and the reading calls `pace()` between slices of
 * rows so that it waits for the answer. `finish()` then ends the SpilledItems and answers an empty
 * SectionItems (the items went to the answer). Without it, or under it, `spilled` never resolves.
 */
export function sectionItemsWriter(options: { keepBytes?: number; itemBytes?: number } = {}) {
  const keepBytes = options.keepBytes ?? Infinity;
  const itemBytes = options.itemBytes ?? 0;
  const pages: ItemPage[] = [];
  const hidden = new Set<string>();
  let bytes = Buffer.allocUnsafeSlow(PAGE_BYTES);
  let used = 0;
  let ids: string[] = [];
  let ends: number[] = [];
  let kept = 0;
  let outlet: SpilledItems | undefined;
  let spill: (items: SpilledItems) => void = () => undefined;
  const spilled = new Promise<SpilledItems>((resolve) => (spill = resolve));
  const close = (last: boolean) => {
    if (ids.length === 0) return;
    // The last page is copied to its size (in a buffer of its own, not Node's shared pool): a
    // cached section (sync-cache.ts, bounded by the bytes it counts) must not keep a mostly
    // empty 1 MB buffer alive behind a short slice.
    let filled = bytes.subarray(0, used);
    if (last) {
      filled = Buffer.allocUnsafeSlow(used);
      bytes.copy(filled, 0, 0, used);
    }
    if (outlet) outlet.push(filled);
    else {
      pages.push(page(ids, ends, filled));
      kept += used + ids.length * itemBytes;
      if (kept > keepBytes) {
        outlet = new SpilledItems(pages.splice(0).map((p) => p.bytes));
        spill(outlet);
      }
    }
    ids = [];
    ends = [];
    used = 0;
  };
  return {
    /** An item sent: its JSON up to the user's part (syncItemStart), then the user's part (cipherUserJson). */
    add(id: string, start: Buffer, user: string): void {
      // A UTF-16 unit takes at most 3 bytes in UTF-8; a comma before, a brace after.
      const most = start.length + user.length * 3 + 2;
      if (used + most > bytes.length) {
        close(false);
        bytes = Buffer.allocUnsafeSlow(Math.max(PAGE_BYTES, most));
      }
      if (ids.length > 0) bytes[used++] = COMMA;
      used += start.copy(bytes, used);
      used += bytes.write(user, used);
      bytes[used++] = 0x7d; // }
      ids.push(id);
      ends.push(used);
    },
    /** An item of the vault not sent to this client. */
    hide(id: string): void {
      hidden.add(id);
    },
    /**
     * Between slices of rows: lets the event loop go (on SQLite the reads never do, and a
     * 10,000-item vault read in one go held every other request for over half a second), then
     * waits while the answer has pages of a spilled vault not yet taken.
     */
    async pace(): Promise<void> {
      await yieldToLoop();
      if (outlet) await outlet.room();
    },
    spilled,
    /** The SpilledItems the pages went to, once they passed `keepBytes` (the last page included). */
    spilledItems(): SpilledItems | undefined {
      return outlet;
    },
    finish(): SectionItems {
      close(true);
      outlet?.end();
      return new SectionItems(pages, outlet ? new Set() : hidden);
    },
  };
}
