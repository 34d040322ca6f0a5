import { createHash } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { sendOrLog } from '../mail/delivery.js';
import { renderMail, type MailBrand } from '../mail/templates.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import type { Revocation } from '../policies/two-factor-policy.js';
import type { ProviderRow } from './two-factor.repository.js';

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

/** After a change of providers: the profile and the vault page read `twoFactorEnabled`. */
export function pushChange(deps: { pushes: Pushes; clock: Clock }, userId: string, revocations: readonly Revocation[]): void {
  deps.pushes.send([
    userPush(PushType.SyncSettings, userId, deps.clock.now()),
    ...revocations.map((r) => userPush(PushType.SyncOrgKeys, r.userId, deps.clock.now())),
  ]);
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
