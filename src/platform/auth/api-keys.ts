import { randomInt } from 'node:crypto';

const API_KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A 30-character random secret, as the official server makes API keys. */
export function randomApiKey(): string {
  return Array.from({ length: 30 }, () => API_KEY_ALPHABET[randomInt(API_KEY_ALPHABET.length)]).join('');
}
