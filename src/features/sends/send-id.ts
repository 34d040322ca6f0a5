/**
 * A Send's access id: its GUID's bytes in .NET order (Guid.ToByteArray: the first three groups
 * little-endian), in URL-safe base64 without padding, as the official server writes it into
 * Send links (`#/send/{accessId}/{key}`) and reads it back from `send_id`.
 */
export function accessIdOf(id: string): string {
  const hex = id.replace(/-/g, '');
  const bytes = Buffer.from(hex, 'hex');
  const dotNet = Buffer.concat([Buffer.from(bytes.subarray(0, 4)).reverse(), Buffer.from(bytes.subarray(4, 6)).reverse(), Buffer.from(bytes.subarray(6, 8)).reverse(), bytes.subarray(8)]);
  return dotNet.toString('base64url');
}

/** The GUID of an access id, or null when it is not one (wrong length or alphabet). */
export function idOfAccessId(accessId: string): string | null {
  if (!/^[A-Za-z0-9_-]{22}$/.test(accessId)) return null;
  const b = Buffer.from(accessId, 'base64url');
  if (b.length !== 16) return null;
  const ordered = Buffer.concat([Buffer.from(b.subarray(0, 4)).reverse(), Buffer.from(b.subarray(4, 6)).reverse(), Buffer.from(b.subarray(6, 8)).reverse(), b.subarray(8)]);
  const hex = ordered.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
