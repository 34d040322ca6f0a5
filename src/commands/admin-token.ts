import { UsageError } from '../shared/startup-error.js';
import { hashAdminToken, newAdminToken } from '../features/admin/admin-token.js';

export const ADMIN_TOKEN_USAGE = `Usage:
  strongroom admin-token [--token <token>]
      Prints a new random admin token and the ADMIN_TOKEN setting (its Argon2id hash) that
      turns on the admin console at /admin. Keep the token itself to sign in; put only the
      hash in the server's settings. --token hashes a token of your own choosing instead
      (at least 16 characters); prefer the random one.`;

/** `strongroom admin-token`: what it prints. */
export async function runAdminTokenCommand(argv: readonly string[]): Promise<string> {
  let token: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return `${ADMIN_TOKEN_USAGE}\n`;
    if (arg === '--token') {
      token = argv[++i];
      if (token === undefined) throw new UsageError('--token needs a value.');
    } else throw new UsageError(`Unknown argument "${arg ?? ''}".\n${ADMIN_TOKEN_USAGE}`);
  }
  if (token !== undefined && token.length < 16) throw new UsageError('--token: use at least 16 characters (or no --token for a random one).');
  const chosen = token ?? newAdminToken();
  const hash = await hashAdminToken(chosen);
  return [
    ...(token === undefined ? [`Admin token (sign in at PUBLIC_URL/admin with it; it is shown only now): ${chosen}`] : []),
    'Setting for the server (environment or .env; in docker-compose files write each $ as $$):',
    `ADMIN_TOKEN='${hash}'`,
    '',
  ].join('\n');
}
