import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/dialect.js';
import type { SecretBox } from '../../platform/auth/secret-box.js';
import type { Clock } from '../../shared/clock.js';
import { ssoSecretPurpose } from './sso-config.repository.js';

/**
 * Whether this instance's secrets key is the one the database's sealed secrets were sealed with.
 * A fleet whose instances each made their own DATA_DIR/secrets.key (no shared SECRETS_KEY) would
 * otherwise fail SSO logins on some instances only. Checked at start: a sealed canary in
 * `server_keys` (purpose `secrets-key-check`) is opened; without one, the newest SSO client secret
 * is, and when it opens the canary is written. Nothing is read or written, and no key file made,
 * while no organization has an SSO configuration.
 */

export const SECRETS_KEY_CHECK_PURPOSE = 'secrets-key-check';
const CANARY = 'strongroom secrets key check';

export const SECRETS_KEY_MISMATCH =
  "This instance's secrets key cannot open the secrets sealed in the database: SSO logins through it fail. Give every instance the same SECRETS_KEY (or one shared DATA_DIR/secrets.key), the one the secrets were sealed with.";

export type SecretsKeyVerdict = 'agrees' | 'differs' | 'nothing-sealed';

export async function checkSecretsKey({ db, secretBox, clock }: { db: Db; secretBox: SecretBox; clock: Clock }): Promise<SecretsKeyVerdict> {
  const newest = await db.selectFrom('sso_configs').select(['organization_id', 'data']).orderBy('revision_date', 'desc').limit(1).executeTakeFirst();
  if (!newest) return 'nothing-sealed';
  const opens = (sealed: string, purpose: string) => {
    try {
      secretBox.open(sealed, purpose);
      return true;
    } catch {
      return false;
    }
  };
  const canary = await db.selectFrom('server_keys').select('private_jwk').where('purpose', '=', SECRETS_KEY_CHECK_PURPOSE).executeTakeFirst();
  if (canary) {
    const { sealed } = JSON.parse(canary.private_jwk) as { sealed?: string };
    return typeof sealed === 'string' && opens(sealed, SECRETS_KEY_CHECK_PURPOSE) ? 'agrees' : 'differs';
  }
  const secret = (JSON.parse(newest.data) as { clientSecret?: string }).clientSecret ?? '';
  if (secret === '') return 'nothing-sealed';
  if (!opens(secret, ssoSecretPurpose(newest.organization_id))) return 'differs';
  try {
    await db
      .insertInto('server_keys')
      .values({ purpose: SECRETS_KEY_CHECK_PURPOSE, kid: 'sb1', private_jwk: JSON.stringify({ sealed: secretBox.seal(CANARY, SECRETS_KEY_CHECK_PURPOSE) }), public_jwk: '{}', creation_date: clock.now().toISOString() })
      .execute();
  } catch (error) {
    // Another instance wrote it first: theirs is checked at the next start.
    if (!isUniqueViolation(error)) throw error;
  }
  return 'agrees';
}
