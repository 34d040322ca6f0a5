import { describe, expect, it } from 'vitest';
import { identityOf } from './oidc-claims.js';
import type { SsoConfigData } from './sso-config.repository.js';

const base: SsoConfigData = { configType: 1, memberDecryptionType: 0, authority: 'https://idp.example', clientId: 'c', clientSecret: 's' };

describe('reading who the identity provider says the person is', () => {
  it('takes sub, email and name by default, the email lower-cased', () => {
    expect(identityOf({ sub: 'abc', email: 'Ada@Example.com', email_verified: true, name: 'Ada L' }, base)).toEqual({ externalId: 'abc', email: 'ada@example.com', emailVerified: true, name: 'Ada L' });
  });

  it('puts the configured claim names first, comma- or space-separated', () => {
    const data = { ...base, additionalUserIdClaimTypes: 'oid', additionalEmailClaimTypes: 'work_mail, email', additionalNameClaimTypes: 'display' };
    expect(identityOf({ sub: 'abc', oid: 'o-1', email: 'home@example.com', work_mail: 'work@example.com', name: 'N', display: 'D' }, data)).toMatchObject({ externalId: 'o-1', email: 'work@example.com', name: 'D' });
  });

  it('falls back to an address-like preferred_username, and to the given and family names', () => {
    expect(identityOf({ sub: 'x', preferred_username: 'bob@example.com', given_name: 'Bob', family_name: 'Byte' }, base)).toMatchObject({ email: 'bob@example.com', name: 'Bob Byte', emailVerified: null });
    expect(identityOf({ sub: 'x', email: 'c@example.com', email_verified: 'false' }, base)?.emailVerified).toBe(false);
    expect(identityOf({ sub: 'x', preferred_username: 'bob' }, base)).toMatchObject({ email: null, name: null });
  });

  it('skips an email claim that is not an address, and names nobody without an id claim', () => {
    expect(identityOf({ sub: 'x', email: 'not-an-address', mail: 'm@example.com' }, base)?.email).toBe('m@example.com');
    expect(identityOf({ email: 'a@example.com' }, base)).toBeNull();
    expect(identityOf({ upn: 'u@corp.example' }, base)?.externalId).toBe('u@corp.example');
  });
});
