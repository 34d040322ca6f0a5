import { crc32, deflateSync } from 'node:zlib';

/**
 * The image answered for a site with no icon, as the official icons service answers a generic
 * globe rather than a 404: a grey ring with a meridian and an equator, 19×19, drawn here so the
 * server ships no binary asset.
 */

const SIZE = 19;

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function drawGlobe(): Buffer {
  const rows: Buffer[] = [];
  const centre = (SIZE - 1) / 2;
  for (let y = 0; y < SIZE; y++) {
    // Each row: filter byte 0, then grey + alpha per pixel.
    const row = Buffer.alloc(1 + SIZE * 2);
    for (let x = 0; x < SIZE; x++) {
      const dx = x - centre;
      const dy = y - centre;
      const r = Math.sqrt(dx * dx + dy * dy);
      const ring = Math.abs(r - 8) < 0.8;
      const inside = r < 8;
      const meridian = inside && Math.abs(Math.sqrt(dx * dx * 2.5 + dy * dy) - 8) < 0.9;
      const line = inside && (Math.abs(dy) < 0.5 || Math.abs(dx) < 0.5);
      row[1 + x * 2] = 0x77;
      row[2 + x * 2] = ring || meridian || line ? 0xff : 0;
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIZE, 0);
  header.writeUInt32BE(SIZE, 4);
  header[8] = 8; // bit depth
  header[9] = 4; // grey with alpha
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const DEFAULT_ICON = drawGlobe();
