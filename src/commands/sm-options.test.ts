import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decryptEncString, decryptText, smAccessTokenKey, symmetricKeyFrom } from '../../test/support/bw-crypto.js';
import { machineLoginForm } from '../../test/support/sm.js';
import { emailOf, expiryOf, guidOf, nameOf, parseSmArgs, rightsOf } from './sm-options.js';
import { accessTokenKey, accessTokenString, newAccessToken } from './sm-token-crypto.js';
import { CommandFailure } from './options.js';

/**
 * The access token `strongroom sm tokens create` makes, checked against the test suite's own
 * implementation of the SDK's derivation (test/support/bw-crypto.ts), and the command line's
 * checks, which run before any password is asked or request sent.
 */

const NOW = new Date('2026-06-15T12:00:00Z');

function failure(run: () => unknown): CommandFailure {
  try {
    run();
  } catch (error) {
    if (error instanceof CommandFailure) return error;
    throw error;
  }
  throw new Error('expected a CommandFailure');
}

describe('the access token', () => {
  it('derives the key the SDK derives from the 16-byte secret', () => {
    const secret = randomBytes(16);
    expect(accessTokenKey(secret).equals(smAccessTokenKey(secret).raw)).toBe(true);
    expect(() => accessTokenKey(randomBytes(32))).toThrow(/16 bytes/);
  });

  it('carries the organization key in a payload only the secret opens, and the token key under the organization key', () => {
    const orgKey = randomBytes(64);
    const expires = new Date('2027-01-01T00:00:00Z');
    const { secret, body } = newAccessToken(orgKey, 'deploy token', expires);
    const org = symmetricKeyFrom(orgKey);
    const tokenKey = smAccessTokenKey(secret);
    expect(JSON.parse(decryptText(body.encryptedPayload, tokenKey))).toEqual({ encryptionKey: orgKey.toString('base64') });
    expect(decryptText(body.key, org)).toBe(tokenKey.raw.toString('base64'));
    expect(decryptText(body.name, org)).toBe('deploy token');
    expect(body.expireAt).toBe('2027-01-01T00:00:00.000Z');
    // The payload does not open with the organization key: only the token's holder reads it.
    expect(() => decryptEncString(body.encryptedPayload, org)).toThrow();
    expect(newAccessToken(orgKey, 'x', null).body.expireAt).toBeNull();
  });

  it('prints as the SDK reads it: version, id, client secret, then the secret in base64', () => {
    const secret = randomBytes(16);
    const id = 'a3b0c4d5-0000-4000-8000-000000000001';
    const token = accessTokenString(id, 'client-secret-30-characters-xx', secret);
    expect(machineLoginForm(token)).toMatchObject({ client_id: id, client_secret: 'client-secret-30-characters-xx' });
    expect(Buffer.from(token.split(':')[1] ?? '', 'base64').equals(secret)).toBe(true);
  });
});

describe('--expires', () => {
  const expiry = (value?: string) => expiryOf(value === undefined ? {} : { expires: value }, NOW);

  it('is never by default or when said so', () => {
    expect(expiry()).toBeNull();
    expect(expiry('never')).toBeNull();
  });

  it('takes a number of days from now', () => {
    expect(expiry('30')?.toISOString()).toBe('2026-07-15T12:00:00.000Z');
    expect(expiry('1')?.toISOString()).toBe('2026-06-16T12:00:00.000Z');
  });

  it('takes a date (the start of the day, UTC) or a date-time with its zone', () => {
    expect(expiry('2026-12-31')?.toISOString()).toBe('2026-12-31T00:00:00.000Z');
    expect(expiry('2026-07-01T08:30:00+02:00')?.toISOString()).toBe('2026-07-01T06:30:00.000Z');
  });

  it.each([
    ['0', /1 to 3650/],
    ['3651', /1 to 3650/],
    ['-5', /expected "never"/],
    ['soon', /expected "never"/],
    ['2026-02-30', /expected "never"/],
    ['2026-07-01T08:30', /expected "never"/],
    ['2026-06-15', /not in the future/],
    ['2020-01-01', /not in the future/],
  ])('refuses %s with exit code 2', (value, message) => {
    const error = failure(() => expiry(value));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/^--expires: /);
    expect(error.message).toMatch(message);
  });
});

describe('the command line', () => {
  it('refuses a password or secret value as an option, naming why', () => {
    for (const flag of ['--password', '--password=x', '-p']) {
      const error = failure(() => parseSmArgs(['--email', 'a@example.com', flag], {}));
      expect(error).toMatchObject({ exitCode: 2 });
      expect(error.message).toMatch(/^The password is not accepted on the command line/);
    }
    expect(failure(() => parseSmArgs(['--value=hunter2'], {})).message).toMatch(/^A secret value is not accepted/);
  });

  it('names an unknown option', () => {
    const error = failure(() => parseSmArgs(['--colour', 'red'], { email: { type: 'string' } }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe('Unknown option "--colour". See "strongroom sm --help".');
  });

  it('checks ids, emails and names', () => {
    expect(guidOf({ project: 'A3B0C4D5-0000-4000-8000-000000000001' }, 'project')).toBe('a3b0c4d5-0000-4000-8000-000000000001');
    expect(failure(() => guidOf({ project: 'prod' }, 'project')).message).toBe('--project: expected an id (a GUID), got "prod".');
    expect(failure(() => guidOf({}, 'org')).message).toMatch(/^--org is required\./);
    expect(emailOf({ email: ' Owner@Example.com ' })).toBe('owner@example.com');
    expect(failure(() => emailOf({ email: 'owner' })).exitCode).toBe(2);
    expect(nameOf({ name: '  production  ' }, 'name')).toBe('production');
    expect(nameOf({}, 'name', 'fallback')).toBe('fallback');
    expect(failure(() => nameOf({ name: '   ' }, 'name')).message).toMatch(/^--name is required/);
    expect(failure(() => nameOf({ name: 'x'.repeat(201) }, 'name')).message).toBe('--name: at most 200 characters.');
  });

  it('reads --read and --write as the web app offers them: read, or read and write', () => {
    expect(rightsOf({})).toEqual({ read: true, write: false });
    expect(rightsOf({ read: true })).toEqual({ read: true, write: false });
    expect(rightsOf({ write: true })).toEqual({ read: true, write: true });
    expect(rightsOf({ read: true, write: true })).toEqual({ read: true, write: true });
    expect(rightsOf({ revoke: true })).toBe('revoke');
    expect(failure(() => rightsOf({ revoke: true, write: true })).exitCode).toBe(2);
  });
});
