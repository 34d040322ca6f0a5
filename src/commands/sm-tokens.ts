import { readMachineAccount, smCommand } from './sm-command.js';
import { expiryOf, guidOf, nameOf } from './sm-options.js';
import { printable } from './output.js';
import { openName, printList, type ApiList } from './sm-output.js';
import { accessTokenString, newAccessToken } from './sm-token-crypto.js';
import { CommandFailure, ExitCode } from './options.js';

/**
 * `sm tokens create|list|revoke`: a machine account's access tokens, through the routes the web
 * app's "Access tokens" tab uses. The token string exists only in what `create` prints: the
 * server keeps a hash of its client secret and never receives its key secret.
 */

/** The name a token gets when --name is not given. */
export const DEFAULT_TOKEN_NAME = 'strongroom command line';

interface TokenCreation {
  id: string;
  clientSecret: string;
  expireAt: string | null;
}

interface Token {
  id: string;
  name: string;
  expireAt: string | null;
  creationDate: string;
}

const ACCOUNT = { 'machine-account': { type: 'string' } } as const;

export const createTokenCommand = smCommand({
  options: { ...ACCOUNT, name: { type: 'string' }, expires: { type: 'string' }, json: { type: 'boolean' } },
  prepare: (values, now) => ({ account: guidOf(values, 'machine-account'), name: nameOf(values, 'name', DEFAULT_TOKEN_NAME), expires: expiryOf(values, now) }),
  async run({ session, values, io }, { account, name, expires }) {
    const machineAccount = await readMachineAccount(session, account);
    const orgKey = await session.organizationKey(machineAccount.organizationId);
    const { secret, body } = newAccessToken(orgKey, name, expires);
    const made = await session.request<TokenCreation>('POST', `/api/service-accounts/${account}/access-tokens`, body);
    const token = accessTokenString(made.id, made.clientSecret, secret);
    secret.fill(0);
    if (values.json) {
      io.stdout.write(`${JSON.stringify({ id: made.id, machineAccountId: account, organizationId: machineAccount.organizationId, name, expireAt: made.expireAt, accessToken: token }, null, 2)}\n`);
    } else {
      // Only the token goes to standard output, so that `$(strongroom sm tokens create …)` is the token.
      io.stdout.write(`${token}\n`);
    }
    const until = made.expireAt === null ? 'never expires' : `expires ${made.expireAt}`;
    io.stderr.write(
      `Access token ${printable(name)} (${made.id}) for machine account ${printable(openName(machineAccount.name, orgKey))} ${until}.\n` +
        'It is shown this once and cannot be read again: store it now (for the SDK or bws, for example as BWS_ACCESS_TOKEN).\n',
    );
    return ExitCode.Ok;
  },
});

export const listTokensCommand = smCommand({
  options: { ...ACCOUNT, json: { type: 'boolean' } },
  prepare: (values) => guidOf(values, 'machine-account'),
  async run({ session, values, io }, account) {
    const machineAccount = await readMachineAccount(session, account);
    const orgKey = await session.organizationKey(machineAccount.organizationId);
    const listed = await session.request<ApiList<Token>>('GET', `/api/service-accounts/${account}/access-tokens`);
    const rows = listed.data.map((t) => ({ id: t.id, name: openName(t.name, orgKey), expireAt: t.expireAt, creationDate: t.creationDate }));
    const day = (date: string) => date.slice(0, 19).replace('T', ' ');
    printList(io, values.json === true, rows, ['ID', 'NAME', 'CREATED (UTC)', 'EXPIRES (UTC)'], (r) => [r.id, r.name, day(r.creationDate), r.expireAt === null ? 'never' : day(r.expireAt)], 'No access tokens.');
    return ExitCode.Ok;
  },
});

export const revokeTokenCommand = smCommand({
  options: { ...ACCOUNT, token: { type: 'string' } },
  prepare: (values) => ({ account: guidOf(values, 'machine-account'), token: guidOf(values, 'token') }),
  async run({ session, io }, { account, token }) {
    await readMachineAccount(session, account);
    // The route ignores ids that are not the account's tokens; a mistyped id is said, not passed over.
    const listed = await session.request<ApiList<Token>>('GET', `/api/service-accounts/${account}/access-tokens`);
    if (!listed.data.some((t) => t.id.toLowerCase() === token)) {
      throw new CommandFailure(`Machine account ${account} has no access token ${token}.`, ExitCode.Refused);
    }
    await session.request('POST', `/api/service-accounts/${account}/access-tokens/revoke`, { ids: [token] });
    io.stdout.write(`Revoked access token ${token}; whatever logged in with it is refused from its next request.\n`);
    return ExitCode.Ok;
  },
});
