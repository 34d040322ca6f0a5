import type { Clock } from '../shared/clock.js';
import type { Db } from '../db/database.js';
import { UsageError } from '../shared/startup-error.js';
import { createSigningKeys } from '../platform/auth/signing-keys.js';

/** Retired keys verify for longer than the longest token they signed lives (invitations: 5 days). */
export const RETIRED_KEY_KEEP_SECONDS = 6 * 24 * 60 * 60;

function retiredDays(): number {
  return RETIRED_KEY_KEEP_SECONDS / 86_400;
}

export const SIGNING_KEY_USAGE = `Usage:
  strongroom signing-key rotate
      Makes a new key sign every token from now on. Tokens signed with the previous key stay
      valid until they expire; keys retired more than ${retiredDays()} days ago are removed.
  strongroom signing-key list
      Prints the published keys (kid, role, since).`;

/** `strongroom signing-key …`: answers what to print. */
export async function runSigningKeyCommand(args: readonly string[], deps: { db: Db; clock: Clock; issuer: string }): Promise<string> {
  const keys = createSigningKeys(deps);
  switch (args[0]) {
    case 'rotate': {
      const kid = await keys.rotate(RETIRED_KEY_KEEP_SECONDS);
      return `New signing key ${kid}. Every instance signs with it once it restarts or first sees a token it signed; tokens signed before stay valid until they expire.\n`;
    }
    case 'list': {
      const rows = await deps.db.selectFrom('server_keys').select(['purpose', 'kid', 'creation_date']).where((eb) => eb.or([eb('purpose', '=', 'jwt-signing'), eb('purpose', 'like', 'jwt-retired:%')])).execute();
      return rows.map((row) => `${row.kid}  ${row.purpose === 'jwt-signing' ? 'signing since' : 'retired since'} ${row.creation_date}\n`).join('');
    }
    default:
      throw new UsageError(SIGNING_KEY_USAGE);
  }
}
