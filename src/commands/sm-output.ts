import { decryptString } from './client/crypto.js';
import { table } from './output.js';
import type { CommandIo } from './users.js';

/** What `strongroom sm …` prints: names opened with the organization key, tables or JSON. */

/** A list answer of the API: `{ object: "list", data }`. */
export interface ApiList<T> {
  data: T[];
}

/**
 * A name the organization key opens. A name it does not open (written with another key, or
 * damaged) is shown as such rather than failing the whole list.
 */
export function openName(enc: string, orgKey: Buffer): string {
  try {
    return decryptString(enc, orgKey);
  } catch {
    return '(cannot be decrypted)';
  }
}

/** Prints `rows` as JSON with `--json`, else as a table, or `empty` when there are none. */
export function printList<T extends Record<string, unknown>>(io: CommandIo, json: boolean, rows: T[], header: string[], cells: (row: T) => string[], empty: string): void {
  if (json) io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else if (rows.length === 0) io.stdout.write(`${empty}\n`);
  else io.stdout.write(`${table(header, rows.map(cells))}\n`);
}
