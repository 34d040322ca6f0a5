import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { OAuthError } from '../../http/error-handler.js';
import { findUserById, type UserRow } from '../../platform/auth/users.repository.js';
import type { PasskeyCeremony } from './passkey-ceremony.js';
import { findPasskeyByCredentialId, spendChallenge, ssoRequired, updatePasskey } from './passkeys.repository.js';
import { toTokenPrfOption } from './passkeys.schemas.js';

const INVALID_CREDENTIAL = 'Invalid credential.';
const SSO_REQUIRED = 'Sso authentication is required.';

/** A passkey login the assertion proved: whose account, and the PRF unlock option to answer with (null when the passkey holds no keys). */
export interface PasskeyLogin {
  user: UserRow;
  prfOption: Record<string, unknown> | null;
}

/**
 * Logging in with a passkey (the official WebAuthnGrantValidator's own part): anonymous
 * assertion options, then `grant_type=webauthn` with their `token` and the `deviceResponse`.
 * The user handle names the account and the credential id one of its passkeys; the identity
 * service does the rest of a login (identity.service.ts).
 */
export function createPasskeyLogin(deps: { db: Db; clock: Clock; ceremony: PasskeyCeremony }) {
  const { db, clock, ceremony } = deps;

  return {
    async assertionOptions() {
      const { options, token } = await ceremony.assertionOptions('Authentication', null);
      return { object: 'webAuthnLoginAssertionOptions' as const, options, token };
    },

    /**
     * Verifies the grant's assertion: the token's challenge (spent on success, so an assertion
     * logs in once), the signature with the passkey's key, user verification and the sign count.
     * Refused when an organization requires the user to log in with single sign-on.
     */
    async verify(form: Record<string, string>): Promise<PasskeyLogin> {
      const token = form.token;
      const deviceResponse = form.deviceresponse;
      if (!token || !deviceResponse) throw new OAuthError('invalid_grant', 'token and deviceResponse are required.');
      const challenge = await ceremony.assertionChallenge(token, 'Authentication', null);
      if (!challenge) throw new OAuthError('invalid_request', 'The passkey login token is invalid or has expired.');
      const claim = ceremony.claimOf(deviceResponse);
      const user = claim?.userId ? await findUserById(db, claim.userId) : undefined;
      const passkey = user && claim ? await findPasskeyByCredentialId(db, user.id, claim.credentialId) : undefined;
      const counter = passkey ? await ceremony.verifyAssertion(deviceResponse, challenge, passkey) : null;
      if (!user || !passkey || counter === null) throw new OAuthError('invalid_grant', INVALID_CREDENTIAL);
      const spent = await db.transaction().execute(async (tx) => {
        if (!(await spendChallenge(tx, challenge.hash, challenge.expirationDate, clock.now().toISOString()))) return false;
        await updatePasskey(tx, passkey.id, { counter });
        return true;
      });
      if (!spent) throw new OAuthError('invalid_grant', INVALID_CREDENTIAL);
      if (await ssoRequired(db, user.id)) throw new OAuthError('invalid_grant', SSO_REQUIRED);
      return { user, prfOption: toTokenPrfOption(passkey) };
    },
  };
}

export type PasskeyLoginService = ReturnType<typeof createPasskeyLogin>;
