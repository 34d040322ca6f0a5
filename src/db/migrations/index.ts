import type { Migration } from 'kysely';
import type { Engine } from '../dialect.js';
import { foundation } from './0001-foundation.js';
import { identity } from './0002-identity.js';
import { vault } from './0003-vault.js';
import { organizations } from './0004-organizations.js';
import { userDisabled } from './0005-user-disabled.js';
import { secretsManager } from './0006-secrets-manager.js';
import { secretReads } from './0007-secret-reads.js';
import { authRequests } from './0009-auth-requests.js';
import { eventsAndTasks } from './0012-events-and-tasks.js';
import { integrations } from './0013-integrations.js';
import { twoStepLogin } from './0014-two-step-login.js';
import { files } from './0015-files.js';
import { adminConsole } from './0016-admin-console.js';
import { organizationReports } from './0018-organization-reports.js';
import { cipherVersions } from './0019-cipher-versions.js';
import { cipherChanges } from './0020-cipher-changes.js';
import { organizationChanges } from './0021-organization-changes.js';
import { sendDownloads } from './0022-send-downloads.js';
import { uncountedReservations } from './0023-uncounted-reservations.js';
import { refreshTokenFamilies } from './0024-refresh-token-families.js';
import { emergencyAccess } from './0025-emergency-access.js';
import { accountKeysV2 } from './0026-account-keys-v2.js';
import { defaultCollectionEmail } from './0027-default-collection-email.js';
import { passkeyLogin } from './0028-passkey-login.js';
import { sendEmails } from './0029-send-emails.js';
import { revocationReasons } from './0030-revocation-reasons.js';
import { sso } from './0031-sso.js';
import { ssoLogins } from './0032-sso-logins.js';
import { trustedDevices } from './0033-trusted-devices.js';
import { adminAuthRequests } from './0034-admin-auth-requests.js';
import { itemsWithAttachments } from './0035-items-with-attachments.js';
import { pushOutbox } from './0036-push-outbox.js';
import { webPush } from './0037-web-push.js';

/** Every migration, in order. Names are fixed once released: never rename or edit one. */
export function migrations(engine: Engine): Record<string, Migration> {
  return {
    '0001-foundation': foundation(engine),
    '0002-identity': identity(engine),
    '0003-vault': vault(engine),
    '0004-organizations': organizations(engine),
    '0005-user-disabled': userDisabled(engine),
    '0006-secrets-manager': secretsManager(engine),
    '0007-secret-reads': secretReads(engine),
    '0009-auth-requests': authRequests(engine),
    '0012-events-and-tasks': eventsAndTasks(engine),
    '0013-integrations': integrations(engine),
    '0014-two-step-login': twoStepLogin(engine),
    '0015-files': files(engine),
    '0016-admin-console': adminConsole(engine),
    '0018-organization-reports': organizationReports(engine),
    '0019-cipher-versions': cipherVersions(engine),
    '0020-cipher-changes': cipherChanges(engine),
    '0021-organization-changes': organizationChanges(engine),
    '0022-send-downloads': sendDownloads(engine),
    '0023-uncounted-reservations': uncountedReservations(),
    '0024-refresh-token-families': refreshTokenFamilies(engine),
    '0025-emergency-access': emergencyAccess(engine),
    '0026-account-keys-v2': accountKeysV2(),
    '0027-default-collection-email': defaultCollectionEmail(),
    '0028-passkey-login': passkeyLogin(engine),
    '0029-send-emails': sendEmails(engine),
    '0030-revocation-reasons': revocationReasons(),
    '0031-sso': sso(engine),
    '0032-sso-logins': ssoLogins(engine),
    '0033-trusted-devices': trustedDevices(engine),
    '0034-admin-auth-requests': adminAuthRequests(),
    '0035-items-with-attachments': itemsWithAttachments(),
    '0036-push-outbox': pushOutbox(),
    '0037-web-push': webPush(engine),
  };
}
