import type { Db } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { AUTH_REQUEST_LIFETIME_MS } from '../auth-requests/auth-requests.service.js';
import Value from 'typebox/value';
import { BadRequest, NotFound } from '../../http/errors.js';
import { Email } from '../../http/schemas.js';
import { findDevice } from '../../platform/auth/users.repository.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { UserCaller } from '../../http/request-context.js';
import { activeDevicesOfUser, isKnownDevice, pendingRequestsByDevice } from './devices.repository.js';
import { toDeviceResponse } from './devices.schemas.js';

/**
 * The web vault sends the email base64url-encoded; the iOS app sends standard base64 and then
 * percent-encodes it. Both decode here.
 */
function decodeRequestEmail(header: string): string {
  let text = header;
  try {
    text = decodeURIComponent(header);
  } catch {
    // Not percent-encoded: read it as it is.
  }
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw BadRequest.field('X-Request-Email', 'The X-Request-Email header must be the base64url-encoded email.');
  const email = Buffer.from(text, 'base64').toString('utf8');
  if (!Value.Check(Email, email)) throw BadRequest.field('X-Request-Email', 'The X-Request-Email header must be the base64url-encoded email.');
  return normalizeEmail(email);
}

/** The devices an account has logged in from (recorded by the identity service at each login). */
export function createDeviceService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** The account's devices but those it deactivated, each with its pending login request, as the official list. */
    async list({ userId }: UserCaller) {
      const since = new Date(clock.now().getTime() - AUTH_REQUEST_LIFETIME_MS).toISOString();
      const [devices, pending] = await Promise.all([activeDevicesOfUser(db, userId), pendingRequestsByDevice(db, userId, since)]);
      return devices.map((d) => toDeviceResponse(d, pending.get(d.identifier) ?? null));
    },

    async byIdentifier({ userId }: UserCaller, identifier: string) {
      const device = await findDevice(db, userId, identifier);
      // A device the account removed is gone from its list, and so from here.
      if (!device?.active) throw new NotFound();
      return toDeviceResponse(device);
    },

    /** Answers false for an unknown account as for an unknown device, so accounts cannot be told apart. */
    known: (encodedEmail: string, identifier: string) => isKnownDevice(db, decodeRequestEmail(encodedEmail), identifier),
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
