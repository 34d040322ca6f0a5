import type { Insertable, NotNull, Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { WebAuthnCredentialsTable } from '../../db/schema.js';
import { bindingPolicies } from '../policies/policies.repository.js';
import { PolicyType } from '../policies/policy-type.js';

export type PasskeyRow = Selectable<WebAuthnCredentialsTable>;

export async function listPasskeys(db: Executor, userId: string): Promise<PasskeyRow[]> {
  return db.selectFrom('webauthn_credentials').selectAll().where('user_id', '=', userId).orderBy('creation_date').orderBy('id').execute();
}

export async function findPasskeyByCredentialId(db: Executor, userId: string, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('webauthn_credentials').selectAll().where('user_id', '=', userId).where('credential_id', '=', credentialId).executeTakeFirst();
}

export async function insertPasskey(db: Executor, row: Insertable<WebAuthnCredentialsTable>): Promise<void> {
  await db.insertInto('webauthn_credentials').values(row).execute();
}

export async function updatePasskey(
  db: Executor,
  id: string,
  values: Partial<Pick<PasskeyRow, 'counter' | 'encrypted_user_key' | 'encrypted_public_key' | 'encrypted_private_key' | 'revision_date'>>,
): Promise<void> {
  await db.updateTable('webauthn_credentials').set(values).where('id', '=', id).execute();
}

export async function deletePasskey(db: Executor, userId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webauthn_credentials').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * The passkeys that can unlock the vault (all three wrapped keys stored), for sync's
 * userDecryption and for a key rotation, which must re-wrap the new user key for each of them.
 */
export async function prfPasskeys(db: Executor, userId: string) {
  return db
    .selectFrom('webauthn_credentials')
    .select(['id', 'credential_id', 'encrypted_user_key', 'encrypted_public_key', 'encrypted_private_key'])
    .where('user_id', '=', userId)
    .where('supports_prf', '=', true)
    .where('encrypted_user_key', 'is not', null)
    .where('encrypted_public_key', 'is not', null)
    .where('encrypted_private_key', 'is not', null)
    .$narrowType<{ encrypted_user_key: NotNull; encrypted_public_key: NotNull; encrypted_private_key: NotNull }>()
    .orderBy('creation_date')
    .orderBy('id')
    .execute();
}

/**
 * Records a challenge as answered; false when it already was (a replay, or a second use racing
 * this one). Challenges whose token has expired are dropped on the way: their tokens are refused
 * anyway, so the table holds no more than the last few minutes' logins.
 */
export async function spendChallenge(db: Executor, challengeHash: string, expirationDate: string, now: string): Promise<boolean> {
  await db.deleteFrom('webauthn_spent_challenges').where('expiration_date', '<', now).execute();
  const result = await db
    .insertInto('webauthn_spent_challenges')
    .values({ challenge_hash: challengeHash, expiration_date: expirationDate })
    .onConflict((oc) => oc.column('challenge_hash').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/**
 * Whether an organization's Require single sign-on policy (4) binds the user, as the official
 * RequireSsoPolicyRequirement decides (bindingPolicies: owners and admins are exempt).
 */
export async function ssoRequired(db: Executor, userId: string): Promise<boolean> {
  return (await bindingPolicies(db, userId, [PolicyType.RequireSso])).length > 0;
}
