import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAccount, registerAccount, testAccount } from '../../test/support/accounts.js';
import { freshEmail } from '../../test/support/admin.js';
import { decryptEncString, registerFinishBody, stretchMasterKey } from '../../test/support/bw-crypto.js';
import { seedMembership, seedOrganization } from '../../test/support/orgs.js';
import { startSmtpSink } from '../../test/support/smtp-sink.js';
import { startTestServer, type TestServer } from '../../test/support/test-server.js';
import type { Config } from '../config/config.js';
import type { CommandInput } from '../shared/terminal-input.js';
import { OrganizationUserType } from '../platform/access/roles.js';
import { runUsersCommand } from './users.js';
import { TextCapture as Capture } from '../../test/support/capture.js';

/**
 * `strongroom users …` in process, on the test server's database, with its standard streams
 * replaced. One server for the file: each test makes its own accounts (fresh emails) and reads
 * back only those; the tests that need other settings or an empty database start their own.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

interface RunOptions {
  /** What the operator types or pipes. */
  input?: string;
  /** Standard input is a terminal (raw mode is recorded). */
  tty?: boolean;
  config?: Partial<Config>;
  /** Let the command open config.databaseUrl itself instead of using the server's database. */
  ownDatabase?: boolean;
  /** With `tty`: the terminal goes away after the input. */
  closeTerminal?: boolean;
  connectTimeoutMs?: number;
}

async function users(s: TestServer, argv: string[], options: RunOptions = {}) {
  const stdin = new PassThrough() as PassThrough & CommandInput;
  const rawModes: boolean[] = [];
  if (options.tty) {
    Object.assign(stdin, { isTTY: true, setRawMode: (mode: boolean) => rawModes.push(mode) });
    // A terminal stays open after the operator's answer, unless the test closes it.
    if (options.input !== undefined) stdin.write(options.input);
    if (options.closeTerminal) stdin.end();
  } else {
    stdin.end(options.input ?? '');
  }
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runUsersCommand(argv, {
    config: { ...s.config, ...options.config },
    io: { stdin, stdout, stderr },
    ...(options.ownDatabase ? {} : { database: s.database }),
    ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
  });
  return { code, stdout: stdout.text, stderr: stderr.text, rawModes };
}

/** One line on standard error, and no stack trace. */
function expectOneLine(stderr: string, fragment: string): void {
  expect(stderr).toContain(fragment);
  expect(stderr.endsWith('\n')).toBe(true);
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
}

/** The accounts' emails, sorted; only those given, when given. */
async function emails(s: TestServer, only?: string[]): Promise<string[]> {
  let query = s.database.db.selectFrom('users').select('email').orderBy('email');
  if (only) query = query.where('email', 'in', only);
  return (await query.execute()).map((r) => r.email);
}
const idOf = async (s: TestServer, email: string) => (await s.database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
const PASSWORD = 'a long enough master password';

describe('strongroom users create', () => {
  it('creates an account from the first line of standard input that the client-derived hash logs into, even with registration closed', async () => {
    // Closed registration is a configuration of its own, which only this test needs.
    const s = await startTestServer({ env: { REGISTRATION_ENABLED: 'false' } });
    try {
      const res = await users(s, ['create', '--email', ' New@Example.com ', '--name', 'New User', '--hint', 'the usual'], { input: `${PASSWORD}\nnot read\n` });
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const row = await s.database.db.selectFrom('users').selectAll().executeTakeFirstOrThrow();
      expect(res.stdout).toBe(`Created user new@example.com (${row.id}).\n`);
      expect(row).toMatchObject({ email: 'new@example.com', name: 'New User', master_password_hint: 'the usual', kdf: 0, kdf_iterations: 600_000 });

      // The tests' own client derivation, from the password alone, opens what the command stored.
      const account = testAccount('new@example.com', PASSWORD, undefined, 'real');
      expect(decryptEncString(row.key ?? '', stretchMasterKey(account.masterKey))).toHaveLength(64);
      const login = await loginAccount(s, account);
      expect((await s.request('GET', '/api/accounts/profile', { token: login.accessToken })).body).toMatchObject({ email: 'new@example.com', name: 'New User' });
    } finally {
      await s.close();
    }
  });

  it('asks twice at a terminal without echoing, and refuses two different answers', async () => {
    const s = server;
    const email = freshEmail('tty');
    const differ = await users(s, ['create', '--email', email], { tty: true, input: `${PASSWORD}\r${PASSWORD}x\r` });
    expect(differ.code).toBe(2);
    expect(differ.stderr).toContain('The two passwords differ; nothing was created.');

    const cancelled = await users(s, ['create', '--email', email], { tty: true, input: 'half typed\u0003' });
    expect(cancelled.code).toBe(1);
    expect(cancelled.stderr).toBe('Master password: \nCancelled.\n');
    expect(cancelled.rawModes).toEqual([true, false]);

    const gone = await users(s, ['create', '--email', email], { tty: true, input: 'half typed', closeTerminal: true });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe('Master password: \nStandard input closed before an answer.\n');
    expect(gone.rawModes).toEqual([true, false]);

    // Both answers in one chunk, as a paste delivers them; a typo taken back with backspace.
    const res = await users(s, ['create', '--email', email, '--iterations', '700000'], { tty: true, input: `${PASSWORD}x\u007f\r${PASSWORD}\r` });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('Master password: \nMaster password again: \n');
    expect(res.stdout).not.toContain(PASSWORD);
    expect(res.rawModes).toEqual([true, false, true, false]);
    const row = await s.database.db.selectFrom('users').select(['kdf_iterations']).where('email', '=', email).executeTakeFirstOrThrow();
    expect(row.kdf_iterations).toBe(700_000);
  });

  it('derives an Argon2id account with the official defaults, or the settings given', async () => {
    const s = server;
    const [argon, argon2] = [freshEmail('argon'), freshEmail('argon2')];
    expect((await users(s, ['create', '--email', argon, '--kdf', 'argon2id'], { input: PASSWORD })).code).toBe(0);
    const res = await users(s, ['create', '--email', argon2, '--kdf', 'argon2id', '--iterations', '2', '--memory', '16', '--parallelism', '1'], { input: PASSWORD });
    expect(res.code, res.stderr).toBe(0);
    const rows = await s.database.db
      .selectFrom('users')
      .select(['email', 'kdf', 'kdf_iterations', 'kdf_memory', 'kdf_parallelism'])
      .where('email', 'in', [argon, argon2])
      .orderBy('kdf_iterations')
      .execute();
    expect(rows).toEqual([
      { email: argon2, kdf: 1, kdf_iterations: 2, kdf_memory: 16, kdf_parallelism: 1 },
      { email: argon, kdf: 1, kdf_iterations: 3, kdf_memory: 64, kdf_parallelism: 4 },
    ]);
    const prelogin = await s.request('POST', '/identity/accounts/prelogin', { json: { email: argon } });
    expect(prelogin.body).toMatchObject({ kdf: 1, kdfIterations: 3, kdfMemory: 64, kdfParallelism: 4 });
  });

  it('refuses an email that is taken, in any letter case, with exit code 1 and before asking for the password', async () => {
    const email = freshEmail('taken');
    await registerAccount(server, { email });
    const res = await users(server, ['create', '--email', email.replace('taken', 'TAKEN')], { tty: true });
    expect(res.code).toBe(1);
    expectOneLine(res.stderr, `Email '${email}' is already taken.`);
    expect(res.rawModes).toEqual([]);
  });

  it('never takes the password from the command line', async () => {
    const email = freshEmail('argv');
    for (const args of [['--password', 'secret-on-argv'], ['--password=secret-on-argv'], ['-p', 'secret-on-argv']]) {
      const res = await users(server, ['create', '--email', email, ...args], { input: PASSWORD });
      expect(res.code).toBe(2);
      expectOneLine(res.stderr, 'The password is not accepted on the command line');
      expect(res.stderr).not.toContain('secret-on-argv');
    }
    expect(await emails(server, [email])).toEqual([]);
  });

  it('refuses bad input with exit code 2 and one line, creating nothing', async () => {
    // Every account, before and after: some cases name no email, and the file's tests run one at
    // a time.
    const before = await emails(server);
    const email = ['--email', freshEmail('bad')];
    const cases: [string[], string, string][] = [
      [[], PASSWORD, '--email is required.'],
      [['--email', 'not-an-email'], PASSWORD, '--email: "not-an-email" is not an email address.'],
      [[...email, '--iterations', '100000'], PASSWORD, '--iterations: KDF iterations must be between 600000 and 2000000.'],
      [[...email, '--iterations', '2000001'], PASSWORD, 'KDF iterations must be between 600000 and 2000000.'],
      [[...email, '--iterations', 'many'], PASSWORD, '--iterations: expected a whole number, got "many".'],
      [[...email, '--kdf', 'argon2id', '--iterations', '1'], PASSWORD, '--iterations: Argon2 iterations must be between 2 and 10.'],
      [[...email, '--kdf', 'argon2id', '--memory', '8'], PASSWORD, '--memory: Argon2 memory must be between 15mb and 1024mb.'],
      [[...email, '--kdf', 'argon2id', '--parallelism', '17'], PASSWORD, '--parallelism: Argon2 parallelism must be between 1 and 16.'],
      [[...email, '--kdf', 'scrypt'], PASSWORD, '--kdf: expected pbkdf2 or argon2id, got "scrypt".'],
      [[...email, '--memory', '64'], PASSWORD, '--memory and --parallelism apply to Argon2id only.'],
      [[...email, '--name', 'n'.repeat(51)], PASSWORD, '--name: at most 50 characters.'],
      [[...email, '--hint', 'h'.repeat(51)], PASSWORD, '--hint: at most 50 characters.'],
      [[...email, '--hint', PASSWORD], PASSWORD, 'The hint must not be the master password.'],
      [[...email, '--bogus'], PASSWORD, 'Unknown option "--bogus". See "strongroom users --help".'],
      [[...email, 'stray'], PASSWORD, 'Unexpected argument "stray"'],
      [email, 'too short\n', 'The master password must be at least 12 characters long.'],
      [email, '', 'No password on standard input'],
      [email, '\nsecond line', 'No password on standard input'],
    ];
    for (const [args, input, message] of cases) {
      const res = await users(server, ['create', ...args], { input });
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2);
      expectOneLine(res.stderr, message);
    }
    expect(await emails(server)).toEqual(before);
  });
});

describe('strongroom users list', () => {
  it('lists every account as a table or as JSON', async () => {
    // Empty to begin with: the list shows every account.
    const s = await startTestServer();
    try {
      expect((await users(s, ['list'])).stdout).toBe('No users.\n');
      await registerAccount(s, { email: 'ann@example.com', name: 'Ann' });
      await registerAccount(s, { email: 'bob@example.com' });
      const [ann, bob] = await s.database.db.selectFrom('users').select(['id', 'email', 'creation_date']).orderBy('email').execute();
      const orgId = await seedOrganization(s);
      await seedMembership(s, { organizationId: orgId, userId: bob?.id ?? '' });
      await s.database.db.updateTable('users').set({ email_verified: true }).where('email', '=', 'ann@example.com').execute();
      expect((await users(s, ['disable', '--email', 'bob@example.com'])).code).toBe(0);

      const json = await users(s, ['list', '--json']);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual([
        { id: ann?.id, email: 'ann@example.com', name: 'Ann', creationDate: ann?.creation_date, disabled: false, emailVerified: true, organizations: 0 },
        { id: bob?.id, email: 'bob@example.com', name: 'bob', creationDate: bob?.creation_date, disabled: true, emailVerified: false, organizations: 1 },
      ]);

      const table = (await users(s, ['list'])).stdout.trimEnd().split('\n');
      expect(table).toHaveLength(3);
      expect(table[0]?.split(/\s{2,}/)).toEqual(['ID', 'EMAIL', 'NAME', 'CREATED (UTC)', 'STATUS', 'VERIFIED', 'ORGS']);
      expect(table[1]?.split(/\s{2,}/)).toEqual([ann?.id, 'ann@example.com', 'Ann', ann?.creation_date.slice(0, 19).replace('T', ' '), 'enabled', 'yes', '0']);
      expect(table[2]?.split(/\s{2,}/)).toEqual([bob?.id, 'bob@example.com', 'bob', bob?.creation_date.slice(0, 19).replace('T', ' '), 'disabled', 'no', '1']);
    } finally {
      await s.close();
    }
  });

  it('shows control characters in names as escapes, never sending them to the terminal', async () => {
    await registerAccount(server, { email: freshEmail('eve'), name: 'Eve\u001b]52;c;ZXZpbA==\u0007' });
    const out = (await users(server, ['list'])).stdout;
    expect(out).toContain('Eve\\x1b]52;c;ZXZpbA==\\x07');
    // eslint-disable-next-line no-control-regex -- the point of the test
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
  });
});

describe('strongroom users invite', () => {
  const linkIn = (text: string) => /(\S+#\/finish-signup\?\S+)/.exec(text)?.[1] ?? '';

  it('prints the sign-up link without SMTP; its token registers that email while registration is closed', async () => {
    // Closed registration and a public address are a configuration of their own, which only this
    // test needs.
    const s = await startTestServer({ env: { REGISTRATION_ENABLED: 'false', PUBLIC_URL: 'https://vault.example.com' } });
    try {
      const res = await users(s, ['invite', '--email', 'Guest@Example.com']);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain('SMTP is not configured (SMTP_HOST), so no mail was sent. Pass this link on to guest@example.com; it works for 5 days:');
      const link = new URL(linkIn(res.stdout));
      expect(`${link.origin}${link.pathname}`).toBe('https://vault.example.com/');
      const params = new URLSearchParams(link.hash.slice('#/finish-signup?'.length));
      expect(link.hash.startsWith('#/finish-signup?')).toBe(true);
      expect(params.get('email')).toBe('guest@example.com');
      expect(params.get('fromEmail')).toBe('true');

      const body = registerFinishBody(testAccount('guest@example.com'), { emailVerificationToken: params.get('token') });
      const finish = await s.request('POST', '/identity/accounts/register/finish', { json: body });
      expect(finish.status, finish.text).toBe(200);
      expect(await emails(s)).toEqual(['guest@example.com']);

      const again = await users(s, ['invite', '--email', 'guest@example.com']);
      expect(again.code).toBe(1);
      expectOneLine(again.stderr, "Email 'guest@example.com' is already taken.");
      const bad = await users(s, ['invite', '--email', 'nobody']);
      expect(bad.code).toBe(2);
      expectOneLine(bad.stderr, 'is not an email address');
    } finally {
      await s.close();
    }
  });

  it('mails the link through the configured SMTP server, and prints it with exit code 4 when the server is down', async () => {
    const s = server;
    const sink = await startSmtpSink();
    try {
      const res = await users(s, ['invite', '--email', 'mailed@example.com'], { config: { smtpHost: '127.0.0.1', smtpPort: sink.port } });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toBe('Sent an invitation to mailed@example.com; the link works for 5 days.\n');
      const mail = await sink.waitFor('mailed@example.com');
      expect(mail.text).toContain(`${s.config.publicUrl}/#/finish-signup?token=`);
      expect(mail.text).toContain('&email=mailed%40example.com&fromEmail=true');
    } finally {
      await sink.close();
    }
    const down = await users(s, ['invite', '--email', 'lost@example.com'], { config: { smtpHost: '127.0.0.1', smtpPort: sink.port } });
    expect(down.code).toBe(4);
    expectOneLine(down.stderr, 'The mail server did not take the invitation');
    expect(linkIn(down.stdout)).toContain('email=lost%40example.com');
  });
});

describe('strongroom users disable, enable', () => {
  it('disables an account at once and enables it again, by email or id', async () => {
    const s = server;
    const email = freshEmail('dana');
    const account = await registerAccount(s, { email });
    const session = await loginAccount(s, account);
    const id = await idOf(s, email);

    const off = await users(s, ['disable', '--email', email.replace('dana', 'Dana')]);
    expect(off).toMatchObject({ code: 0, stdout: `Disabled ${email}; its sessions have ended.\n`, stderr: '' });
    expect((await s.request('GET', '/api/accounts/profile', { token: session.accessToken })).status).toBe(401);
    await expect(loginAccount(s, account)).rejects.toThrow(/400.*This account has been disabled/);
    expect((await users(s, ['disable', '--id', id.toUpperCase()])).stdout).toBe(`${email} was already disabled.\n`);

    const on = await users(s, ['enable', '--id', id]);
    expect(on).toMatchObject({ code: 0, stdout: `Enabled ${email}.\n` });
    await loginAccount(s, account);
    expect((await users(s, ['enable', '--email', email])).stdout).toBe(`${email} was already enabled.\n`);
  });

  it('refuses an unknown user with 1 and an ambiguous or malformed target with 2', async () => {
    const s = server;
    for (const command of ['disable', 'enable', 'delete']) {
      const yes = command === 'delete' ? ['--yes'] : [];
      const unknown = await users(s, [command, '--email', 'ghost@example.com', ...yes]);
      expect(unknown.code).toBe(1);
      expectOneLine(unknown.stderr, 'There is no user with email ghost@example.com.');
      const unknownId = await users(s, [command, '--id', '00000000-0000-4000-8000-000000000000', ...yes]);
      expect(unknownId.code).toBe(1);
      expectOneLine(unknownId.stderr, 'There is no user with id 00000000-0000-4000-8000-000000000000.');
      for (const [args, message] of [
        [['--email', 'a@example.com', '--id', '00000000-0000-4000-8000-000000000000'], 'Name the user with either --email or --id.'],
        [[], 'Name the user with either --email or --id.'],
        [['--id', '42'], '--id: expected a GUID, got "42".'],
        [['--id'], 'Option "--id <value>" argument missing'],
      ] as const) {
        const res = await users(s, [command, ...yes, ...args]);
        expect(res.code, `${command} ${args.join(' ')}`).toBe(2);
        expectOneLine(res.stderr, message);
      }
    }
  });
});

describe('strongroom users delete', () => {
  it('asks at a terminal, refuses without one unless told --yes, and deletes', async () => {
    const s = server;
    const [erin, fred] = [freshEmail('erin'), freshEmail('fred')];
    const account = await registerAccount(s, { email: erin });
    await registerAccount(s, { email: fred });
    const session = await loginAccount(s, account);

    const piped = await users(s, ['delete', '--email', erin], { input: 'y\n' });
    expect(piped.code).toBe(2);
    expectOneLine(piped.stderr, 'Standard input is not a terminal, so there is no one to confirm the deletion: pass --yes.');

    const declined = await users(s, ['delete', '--email', erin], { tty: true, input: 'n\n' });
    expect(declined.code).toBe(1);
    expect(declined.stderr).toMatch(new RegExp(`^Delete ${erin.replaceAll('.', '\\.')} \\([0-9a-f-]{36}\\) and everything in its vault\\? This cannot be undone\\. \\[y/N\\] Not deleted\\.\n$`));
    expect(await emails(s, [erin, fred])).toEqual([erin, fred]);

    const confirmed = await users(s, ['delete', '--email', erin], { tty: true, input: 'yes\n' });
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toBe(`Deleted ${erin}.\n`);
    expect((await s.request('GET', '/api/accounts/profile', { token: session.accessToken })).status).toBe(401);

    expect((await users(s, ['delete', '--id', await idOf(s, fred), '--yes'])).code).toBe(0);
    expect(await emails(s, [erin, fred])).toEqual([]);
  });

  it("refuses to delete an organization's only owner", async () => {
    const s = server;
    const email = freshEmail('owner');
    await registerAccount(s, { email });
    const id = await idOf(s, email);
    await seedMembership(s, { organizationId: await seedOrganization(s), userId: id, type: OrganizationUserType.Owner });
    const res = await users(s, ['delete', '--email', email, '--yes']);
    expect(res.code).toBe(1);
    expectOneLine(res.stderr, 'Cannot delete this user because it is the sole owner of at least one organization.');
    expect(await emails(s, [email])).toEqual([email]);
  });
});

describe('strongroom users: usage and database errors', () => {
  it('prints its usage with --help, and refuses a missing or unknown subcommand with 2', async () => {
    const help = await users(server, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('strongroom users create --email <email>');
    expect(help.stdout).toContain('Exit codes: 0 done, 1 refused');
    expect((await users(server, ['create', '--help'])).code).toBe(0);
    const none = await users(server, []);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage:');
    const unknown = await users(server, ['frobnicate']);
    expect(unknown.code).toBe(2);
    expectOneLine(unknown.stderr, 'Unknown users command "frobnicate". See "strongroom users --help".');
  });

  it('answers 3 in one line when the database is missing or unreachable, creating nothing', async () => {
    const s = server;
    const missing = await users(s, ['list'], { ownDatabase: true, config: { databaseUrl: 'sqlite:/nonexistent-strongroom/dir/x.sqlite' } });
    expect(missing.code).toBe(3);
    expectOneLine(missing.stderr, 'There is no database at /nonexistent-strongroom/dir/x.sqlite');
    expect(existsSync('/nonexistent-strongroom')).toBe(false);
    // Bad input is reported as such before the database is looked at.
    const bad = await users(s, ['disable', '--id', '42'], { ownDatabase: true, config: { databaseUrl: 'sqlite:/nonexistent-strongroom/dir/x.sqlite' } });
    expect(bad.code).toBe(2);

    const notADatabase = join(mkdtempSync(join(tmpdir(), 'sr-users-')), 'junk.sqlite');
    writeFileSync(notADatabase, 'this is not a database, just a text file that is long enough to have a header\n'.repeat(20));
    const junk = await users(s, ['list'], { ownDatabase: true, config: { databaseUrl: `sqlite:${notADatabase}` } });
    expect(junk.code).toBe(3);
    expectOneLine(junk.stderr, 'The database is unavailable: file is not a database');

    // Port 9 (discard) has no PostgreSQL behind it: the connection is refused.
    const unreachable = await users(s, ['create', '--email', 'pg@example.com'], {
      ownDatabase: true,
      input: PASSWORD,
      config: { databaseUrl: 'postgres://strongroom:secret-pw@127.0.0.1:9/strongroom' },
    });
    expect(unreachable.code).toBe(3);
    expectOneLine(unreachable.stderr, 'The database is unavailable: connect ECONNREFUSED 127.0.0.1:9');
    expect(unreachable.stderr).not.toContain('secret-pw');

    // A server that accepts connections and never answers.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const started = Date.now();
      const stalled = await users(s, ['list'], { ownDatabase: true, connectTimeoutMs: 300, config: { databaseUrl: `postgres://strongroom@127.0.0.1:${port}/strongroom` } });
      expect(stalled.code).toBe(3);
      expectOneLine(stalled.stderr, 'The database is unavailable: no answer within 0.3 s');
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
