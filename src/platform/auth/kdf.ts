import { BadRequest } from '../../http/errors.js';

/** Bitwarden's KdfType. */
export enum KdfType {
  PBKDF2_SHA256 = 0,
  Argon2id = 1,
}

export interface KdfSettings {
  kdf: KdfType;
  iterations: number;
  memory: number | null;
  parallelism: number | null;
}

/** What the official server hands out for accounts it does not know (and for new ones). */
export const DEFAULT_KDF: KdfSettings = { kdf: KdfType.PBKDF2_SHA256, iterations: 600_000, memory: null, parallelism: null };

/** The official server's accepted ranges (KdfSettingsValidator / AuthConstants). */
export function validateKdf(settings: KdfSettings, field = 'kdf'): KdfSettings {
  const { kdf, iterations, memory, parallelism } = settings;
  if (kdf === KdfType.PBKDF2_SHA256) {
    if (iterations < 600_000 || iterations > 2_000_000) {
      throw BadRequest.field(`${field}Iterations`, 'KDF iterations must be between 600000 and 2000000.');
    }
    return { kdf, iterations, memory: null, parallelism: null };
  }
  if (kdf === KdfType.Argon2id) {
    if (iterations < 2 || iterations > 10) throw BadRequest.field(`${field}Iterations`, 'Argon2 iterations must be between 2 and 10.');
    if (memory === null || memory < 15 || memory > 1024) {
      throw BadRequest.field(`${field}Memory`, 'Argon2 memory must be between 15mb and 1024mb.');
    }
    if (parallelism === null || parallelism < 1 || parallelism > 16) {
      throw BadRequest.field(`${field}Parallelism`, 'Argon2 parallelism must be between 1 and 16.');
    }
    return { kdf, iterations, memory, parallelism };
  }
  throw BadRequest.field(field, 'Unknown KDF type.');
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
