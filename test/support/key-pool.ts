import { generateKeyPair } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateRsaKeyPair, RSA_KEY_PAIR_OPTIONS } from './bw-crypto.js';

/**
 * Test accounts' RSA key pairs, made ahead of time. Generating a 2048-bit pair costs about
 * 0.13 s of CPU, more than the rest of an account together, and the server never opens these
 * keys, so the test run's global setup makes a pool of them once per machine (a file in the
 * temporary folder) and each test process hands them out in order: every account of a test file
 * still has a pair of its own. Past the pool, pairs are generated as before.
 */
const POOL_FILE = join(tmpdir(), 'strongroom-test-rsa-2048-v1.json');
const POOL_SIZE = 160;

type KeyPair = { publicKeyB64: string; privateKeyDer: Buffer };

let pool: KeyPair[] | undefined;
let handedOut = 0;

function readPool(): KeyPair[] {
  try {
    const stored = JSON.parse(readFileSync(POOL_FILE, 'utf8')) as { publicKeyB64: string; privateKeyB64: string }[];
    return stored.map((pair) => ({ publicKeyB64: pair.publicKeyB64, privateKeyDer: Buffer.from(pair.privateKeyB64, 'base64') }));
  } catch {
    return [];
  }
}

/** Hands the pool out again from its start, for the next test file in this worker process. */
export function rewindKeyPool(): void {
  handedOut = 0;
}

/** The next key pair of the pool, or a fresh one once this process has used the pool up. */
export function pooledRsaKeyPair(): KeyPair {
  pool ??= readPool();
  return pool[handedOut++] ?? generateRsaKeyPair();
}

function generate(): Promise<{ publicKeyB64: string; privateKeyB64: string }> {
  return new Promise((resolve, reject) => {
    generateKeyPair('rsa', RSA_KEY_PAIR_OPTIONS, (error: Error | null, publicKey: Buffer, privateKey: Buffer) => {
      if (error) reject(error);
      else resolve({ publicKeyB64: publicKey.toString('base64'), privateKeyB64: privateKey.toString('base64') });
    });
  });
}

/** Fills the pool file unless it is already full (test/global-setup.ts, before any worker starts). */
export async function ensureKeyPool(): Promise<void> {
  if (readPool().length >= POOL_SIZE) return;
  // Generated on libuv's thread pool, so every core works on them.
  const stored = await Promise.all(Array.from({ length: POOL_SIZE }, generate));
  // Written aside and renamed, so a run starting meanwhile reads the old file or the whole new one.
  const partial = `${POOL_FILE}.${process.pid}`;
  writeFileSync(partial, JSON.stringify(stored));
  renameSync(partial, POOL_FILE);
}
