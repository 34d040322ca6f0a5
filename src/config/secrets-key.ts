import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';

/**
 * The key that seals server-read secrets (platform/auth/secret-box.ts): SECRETS_KEY, or
 * DATA_DIR/secrets.key, made on first use (owner-only) so a server that never stores such a
 * secret writes nothing. Instances sharing DATA_DIR race to make it: the loser reads the winner's.
 */
export function secretsKeyOf(config: Pick<Config, 'secretsKey' | 'dataDir'>): () => Uint8Array {
  let key: Uint8Array | undefined;
  return () => {
    if (key) return key;
    if (config.secretsKey) return (key = Buffer.from(config.secretsKey, 'base64'));
    const file = join(config.dataDir, 'secrets.key');
    try {
      mkdirSync(config.dataDir, { recursive: true });
      writeFileSync(file, randomBytes(32).toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = readFileSync(file, 'utf8').trim();
    const bytes = Buffer.from(text, 'base64');
    if (bytes.length !== 32) throw new Error(`${file} does not hold 32 bytes in base64; restore it from a backup, or set SECRETS_KEY`);
    return (key = bytes);
  };
}
