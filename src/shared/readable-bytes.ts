/**
 * Bitwarden's CoreHelpers.ReadableBytesSize: "812 Bytes", "1.5 KB", "20 MB", "1.2 GB", the
 * sizeName of attachments and Send files alike.
 */
export function readableBytes(size: number): string {
  const units = ['KB', 'MB', 'GB', 'TB'];
  if (size < 1024) return `${size} Bytes`;
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Math.round(value * 10) / 10} ${units[unit]}`;
}
