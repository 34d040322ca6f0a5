import { decryptString } from './client/crypto.js';
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

/**
 * Text from the vault, shown on a terminal: control characters (an escape sequence in a name
 * someone saved) are shown as `\xNN`, never sent to the terminal.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows].map((row) => row.map(printable));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]?.length ?? 0)));
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

/** Prints `rows` as JSON with `--json`, else as a table, or `empty` when there are none. */
export function printList<T extends Record<string, unknown>>(io: CommandIo, json: boolean, rows: T[], header: string[], cells: (row: T) => string[], empty: string): void {
  if (json) io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else if (rows.length === 0) io.stdout.write(`${empty}\n`);
  else io.stdout.write(`${table(header, rows.map(cells))}\n`);
}
