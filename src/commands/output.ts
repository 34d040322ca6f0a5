// What the operator commands print for people: names and text that others chose, shown safely,
// and tables lined up on a terminal.

/**
 * Text from accounts or the vault, shown on a terminal: control characters (an escape sequence in
 * a name someone registered or saved) are shown as `\xNN`, never sent to the terminal.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Columns padded to their widest cell, every cell printable; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows].map((row) => row.map(printable));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]?.length ?? 0)));
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}
