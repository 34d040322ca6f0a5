import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Seals the few secrets the server must itself read back later (an identity provider's client
 * secret) with AES-256-GCM under the server's secrets key, which is kept outside the database
 * (SECRETS_KEY, or DATA_DIR/secrets.key), so a copy of the database alone does not give them away.
 * `purpose` is bound to the sealed text as associated data: a secret sealed for one organization
 * cannot be moved to another's row and opened there.
 */
export interface SecretBox {
  seal(plain: string, purpose: string): string;
  /** Throws when the text was not sealed under this key and purpose. */
  open(sealed: string, purpose: string): string;
}

const VERSION = 'sb1';

/** `key`: the 32 bytes, or where to get them when first needed (the key file is made on first use). */
export function createSecretBox(key: Uint8Array | (() => Uint8Array)): SecretBox {
  let loaded: Buffer | undefined;
  const keyBytes = (): Buffer => {
    if (loaded) return loaded;
    const bytes = typeof key === 'function' ? key() : key;
    if (bytes.length !== 32) throw new Error('The secrets key must be 32 bytes.');
    return (loaded = Buffer.from(bytes));
  };
  if (typeof key !== 'function') keyBytes();
  return {
    seal(plain, purpose) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keyBytes(), iv);
      cipher.setAAD(Buffer.from(purpose, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, purpose) {
      const [version, iv, body, tag] = sealed.split('.');
      if (version !== VERSION || iv === undefined || body === undefined || tag === undefined) throw new Error('Not a sealed secret.');
      // Without authTagLength Node accepts a tag cut short (a prefix of the real one still checks),
      // which would make forging far cheaper.
      const decipher = createDecipheriv('aes-256-gcm', keyBytes(), Buffer.from(iv, 'base64url'), { authTagLength: 16 });
      decipher.setAAD(Buffer.from(purpose, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
