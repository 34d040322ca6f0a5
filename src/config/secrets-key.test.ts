import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { secretsKeyOf } from './secrets-key.js';

describe('secrets key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'secrets-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('makes DATA_DIR/secrets.key on first use, owner-only, and reads the same key after', () => {
    const dataDir = join(dir, 'a');
    const first = secretsKeyOf({ dataDir, secretsKey: undefined });
    const key = first();
    expect(key.length).toBe(32);
    expect(statSync(join(dataDir, 'secrets.key')).mode & 0o777).toBe(0o600);
    expect(Buffer.from(secretsKeyOf({ dataDir, secretsKey: undefined })())).toEqual(Buffer.from(key));
  });

  it('takes SECRETS_KEY over the file, and writes nothing then', () => {
    const dataDir = join(dir, 'b');
    const given = Buffer.alloc(32, 7).toString('base64');
    expect(Buffer.from(secretsKeyOf({ dataDir, secretsKey: given })())).toEqual(Buffer.alloc(32, 7));
    expect(() => readFileSync(join(dataDir, 'secrets.key'))).toThrow();
  });

  it('refuses a key file that does not hold 32 bytes', () => {
    const dataDir = join(dir, 'c');
    secretsKeyOf({ dataDir, secretsKey: undefined })();
    writeFileSync(join(dataDir, 'secrets.key'), 'c2hvcnQ=\n');
    expect(() => secretsKeyOf({ dataDir, secretsKey: undefined })()).toThrow(/32 bytes/);
  });
});
