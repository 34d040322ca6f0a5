import { createHash } from 'node:crypto';
import type { Executor } from '../../db/database.js';
import type { ClientContext } from '../../http/request-context.js';
import type { AuditEvent, AuditLog } from '../../platform/audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { sendOrLog } from '../mail/delivery.js';
import { renderMail, type MailBrand } from '../mail/templates.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { leaveRevokedOrganizations, noPushRegistrations, type PushRegistrations } from '../../platform/push/push-registrations.js';
import { revokeNonCompliant, type Revocation } from '../policies/two-factor-policy.js';
import { deleteAllProviders, deleteRecovery, deleteRememberTokens, type ProviderRow } from './two-factor.repository.js';

/**
 * What setting two-step login up and checking it at login share: the provider types, their
 * stored settings, the hashes kept instead of secrets, and what follows a change of providers.
 */

/** TwoFactorProviderType, with Bitwarden's names and numbers. */
export enum TwoFactorProviderType {
  Authenticator = 0,
  Email = 1,
  Duo = 2,
  YubiKey = 3,
  U2f = 4,
  Remember = 5,
  OrganizationDuo = 6,
  WebAuthn = 7,
  RecoveryCode = 8,
}

/** The providers this server offers; Duo and YubiKey need outside services and are not configured. */
export const OFFERED_PROVIDERS: readonly TwoFactorProviderType[] = [TwoFactorProviderType.Authenticator, TwoFactorProviderType.Email, TwoFactorProviderType.WebAuthn];

export const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
export const recoveryHash = (userId: string, code: string) => sha256(`${userId}\nrecovery\n${code.replace(/[\s-]/g, '').toUpperCase()}`);

export function metadataOf(row: ProviderRow | undefined): Record<string, unknown> {
  if (!row) return {};
  try {
    return JSON.parse(row.metadata) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/**
 * The one way two-step login is turned off for a user (a recovery code, the operator, an account
 * recovery): every provider, the recovery code and the remember tokens go, `event` is recorded,
 * and the Two-step login policy revokes the user where it binds them. Runs in the caller's
 * transaction; `providers` is how many provider rows were deleted (0: none was on record), and
 * the caller sends `pushChange` with the revocations after the commit.
 */
export async function turnOffTwoFactor(
  tx: Executor,
  audit: AuditLog,
  client: ClientContext,
  change: { userId: string; event: AuditEvent; now: string },
): Promise<{ providers: number; revocations: Revocation[] }> {
  const providers = await deleteAllProviders(tx, change.userId);
  await deleteRecovery(tx, change.userId);
  await deleteRememberTokens(tx, change.userId);
  await audit.record(tx, client, change.event);
  return { providers, revocations: await revokeNonCompliant(tx, audit, client, { userId: change.userId }, change.now) };
}

/** After a change of providers: the profile and the vault page read `twoFactorEnabled`. */
export function pushChange(deps: { pushes: Pushes; clock: Clock; registrations?: PushRegistrations }, userId: string, revocations: readonly Revocation[]): void {
  deps.pushes.send([
    userPush(PushType.SyncSettings, userId, deps.clock.now()),
    ...revocations.map((r) => userPush(PushType.SyncOrgKeys, r.userId, deps.clock.now())),
  ]);
  leaveRevokedOrganizations(deps.registrations ?? noPushRegistrations, revocations);
}

/** Tells the user two-step login went off (a failed mail is logged, not an error). */
export async function mailTurnedOff(deps: { mailer: Mailer; brand: MailBrand }, user: UserRow, what: string, log: MailLog): Promise<void> {
  const message = renderMail(user.email, deps.brand, {
    subject: 'Two-step login turned off',
    paragraphs: [what, 'Turn it back on in your account settings.'],
    footnote: 'If this was not you, change your master password now.',
  });
  await sendOrLog(deps.mailer, message, log, 'two-step login notice');
}
