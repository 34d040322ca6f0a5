import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { systemClock, type Clock } from '../shared/clock.js';
import type { Config } from '../config/config.js';
import { sqlitePathOf, type Database } from '../db/database.js';
import { DATABASE_CONNECT_TIMEOUT_MS, DatabaseNotReady, openReadyDatabase } from '../db/open.js';
import { BadRequest, HttpError, NotFound } from '../http/errors.js';
import { isGuid } from '../http/ids.js';
import { NO_CLIENT, SILENT_LOG, type OperatorCaller } from '../http/request-context.js';
import { firstLine, InputAborted, readHiddenLine, readLine, type CommandInput } from '../shared/terminal-input.js';
import { causeOf } from '../shared/startup-error.js';
import { createFeatures, type Features } from '../wiring.js';
import type { UserRow } from '../platform/auth/users.repository.js';
import { InvitationNotMailed, OPERATOR_INVITATION_DAYS } from '../features/accounts/operator.service.js';
import { createClientAccountKeys } from '../features/accounts/client-keys.js';
import { DEFAULT_KDF, KdfType, validateKdf, type KdfSettings } from '../platform/auth/kdf.js';
import { table } from './output.js';
import { CommandFailure, ExitCode, emailOption as sharedEmailOption, parseOptions, text, usageError, type OptionSpecs, type OptionValues } from './options.js';

/** The operator at the terminal: no client, and the command prints what it has to say itself. */
const COMMAND_CALLER: OperatorCaller = { operator: true, client: NO_CLIENT, log: SILENT_LOG };

export const USERS_USAGE = `Usage:
  strongroom users create --email <email> [--name <name>] [--hint <hint>]
                          [--kdf pbkdf2|argon2id] [--iterations <n>]
                          [--memory <MiB>] [--parallelism <n>]
      Creates an account as an official client would: the master password is derived into its
      hash and keys here, and the server only stores those. The password is asked twice at a
      terminal, or read from the first line of standard input when that is not a terminal; it
      is never taken from the command line. PBKDF2-SHA256 with 600000 iterations by default
      (600000-2000000 accepted); Argon2id defaults to 3 iterations (2-10), 64 MiB (15-1024)
      and 4 threads (1-16).
  strongroom users list [--json]
      Lists every account: id, email, name, creation date, enabled or disabled, email
      verified, organization count.
  strongroom users invite --email <email>
      Mails a sign-up link (PUBLIC_URL/#/finish-signup?token=...) that lets this email register
      even when REGISTRATION_ENABLED is false; without SMTP the link is printed to pass on.
      The link works for 5 days.
  strongroom users disable (--email <email> | --id <id>)
      The account keeps its data but cannot log in; its sessions end at once.
  strongroom users enable (--email <email> | --id <id>)
  strongroom users delete (--email <email> | --id <id>) [--yes]
      Deletes the account and its vault. Asks for confirmation at a terminal; --yes skips it and
      is required when standard input is not a terminal. Refused while the account is the only
      owner of an organization.

Exit codes: 0 done, 1 refused (email taken, no such user, sole owner, not confirmed, cancelled),
  2 usage error or bad input or configuration, 3 database unavailable,
  4 invitation made but not mailed (the link is printed), 70 internal error.`;

export interface CommandIo {
  stdin: CommandInput;
  stdout: Writable;
  stderr: Writable;
}

export interface UsersCommandDeps {
  config: Config;
  io: CommandIo;
  /** A database the caller opened and migrated, to work on and leave open; by default the command opens DATABASE_URL. */
  database?: Database;
  clock?: Clock;
  /** How long the database may take to answer its first query (15 s by default). */
  connectTimeoutMs?: number;
}

const usage = (message: string) => usageError('users', message);

/** The official clients' minimum master password length. */
const MIN_PASSWORD_LENGTH = 12;

type Values = OptionValues;

function parse(args: string[], options: OptionSpecs): Values {
  return parseOptions('users', args, options).values;
}

function emailOption(values: Values): string {
  return sharedEmailOption('users', values);
}

function integerOption(values: Values, name: string): number | undefined {
  const value = text(values, name);
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new CommandFailure(`--${name}: expected a whole number, got "${value}".`, ExitCode.Usage);
  return Number(value);
}

/** The official clients' Argon2id defaults: 3 iterations, 64 MiB, 4 threads. */
const ARGON2_DEFAULTS = { iterations: 3, memory: 64, parallelism: 4 };

function kdfOption(values: Values): KdfSettings {
  const kdf = text(values, 'kdf') ?? 'pbkdf2';
  const iterations = integerOption(values, 'iterations');
  const memory = integerOption(values, 'memory');
  const parallelism = integerOption(values, 'parallelism');
  let settings: KdfSettings;
  if (kdf === 'argon2id') {
    settings = {
      kdf: KdfType.Argon2id,
      iterations: iterations ?? ARGON2_DEFAULTS.iterations,
      memory: memory ?? ARGON2_DEFAULTS.memory,
      parallelism: parallelism ?? ARGON2_DEFAULTS.parallelism,
    };
  } else if (kdf === 'pbkdf2') {
    if (memory !== undefined || parallelism !== undefined) {
      throw new CommandFailure('--memory and --parallelism apply to Argon2id only.', ExitCode.Usage);
    }
    settings = { kdf: KdfType.PBKDF2_SHA256, iterations: iterations ?? DEFAULT_KDF.iterations, memory: null, parallelism: null };
  } else {
    throw new CommandFailure(`--kdf: expected pbkdf2 or argon2id, got "${kdf}".`, ExitCode.Usage);
  }
  try {
    return validateKdf(settings);
  } catch (error) {
    // validateKdf names the field as the API does (kdfMemory); say which option that is.
    const field = error instanceof HttpError ? Object.keys(error.validationErrors ?? {})[0] : undefined;
    const option = field === 'kdfMemory' ? '--memory' : field === 'kdfParallelism' ? '--parallelism' : '--iterations';
    throw new CommandFailure(`${option}: ${messageOf(error)}`, ExitCode.Usage);
  }
}

/** The one line an error is reported as; a field's validation message rather than the envelope's. */
function messageOf(error: unknown): string {
  if (error instanceof HttpError && error.validationErrors) {
    const first = Object.values(error.validationErrors)[0]?.[0];
    if (first) return first;
  }
  // The driver's own message names the address it tried; causeOf covers the errors without one.
  if (error instanceof Error && error.message) return error.message;
  return causeOf(error);
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** Errors that say the database cannot be reached or opened, rather than that a query is wrong. */
function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_CODES.has(code)) return true;
    // SQLite cannot open, lock or write the file; PostgreSQL: connection exceptions, shutdown, bad login or database.
    if (/^SQLITE_(CANTOPEN|BUSY|LOCKED|READONLY|NOTADB|CORRUPT|IOERR|PERM)/.test(code)) return true;
    if (/^(08|57P|28|3D)/.test(code)) return true;
  }
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  return error instanceof Error && /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(error.message);
}

/**
 * Opens the configured database and brings its schema up to date. A missing SQLite file is
 * refused rather than created: an operator command run with the wrong DATA_DIR or from another
 * directory would otherwise create the account in a new, empty database the server never reads.
 */
async function openExisting(config: Config, connectTimeoutMs: number): Promise<Database> {
  const url = config.databaseUrl;
  const path = sqlitePathOf(url);
  if (path !== null) {
    if (path !== ':memory:' && !existsSync(path)) {
      throw new CommandFailure(
        `There is no database at ${path}: check DATABASE_URL or DATA_DIR, or create it with "strongroom migrate".`,
        ExitCode.DatabaseUnavailable,
      );
    }
  }
  try {
    return (await openReadyDatabase(url, { poolSize: 2, connectTimeoutMs, postgresPreparedStatements: config.postgresPreparedStatements })).database;
  } catch (error) {
    if (!(error instanceof DatabaseNotReady)) throw error;
    // A migration that fails for another reason than the database going away will not mend
    // itself by retrying later.
    const unavailable = error.step !== 'migrate' || isDatabaseUnavailable(error.reason);
    const code = unavailable ? ExitCode.DatabaseUnavailable : ExitCode.Internal;
    throw new CommandFailure(`The database is unavailable: ${messageOf(error.reason)}`, code);
  }
}

async function readNewPassword(io: CommandIo): Promise<string> {
  let password: string;
  if (io.stdin.isTTY) {
    password = await readHiddenLine(io.stdin, io.stderr, 'Master password: ');
    const again = await readHiddenLine(io.stdin, io.stderr, 'Master password again: ');
    if (again !== password) throw new CommandFailure('The two passwords differ; nothing was created.', ExitCode.Usage);
  } else {
    const line = await firstLine(io.stdin);
    if (line === null || line === '') throw new CommandFailure('No password on standard input (its first line is the password).', ExitCode.Usage);
    password = line;
  }
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw new CommandFailure(`The master password must be at least ${MIN_PASSWORD_LENGTH} characters long.`, ExitCode.Usage);
  }
  return password;
}

const USER_TARGET = { email: { type: 'string' }, id: { type: 'string' } } as const;

type Target = { email: string } | { id: string };

/** The account an --email or --id names: exactly one of them. */
function targetOption(values: Values): Target {
  const email = text(values, 'email');
  const id = text(values, 'id');
  if ((email === undefined) === (id === undefined)) throw usage('Name the user with either --email or --id.');
  if (id === undefined) return { email: emailOption(values) };
  if (!isGuid(id)) throw new CommandFailure(`--id: expected a GUID, got "${id}".`, ExitCode.Usage);
  return { id: id.toLowerCase() };
}

async function targetUser(features: Features, target: unknown): Promise<UserRow> {
  const t = target as Target;
  const user = await features.accounts.findUser(t);
  if (!user) throw new CommandFailure(`There is no user with ${'id' in t ? `id ${t.id}` : `email ${t.email}`}.`, ExitCode.Refused);
  return user;
}

interface Subcommand {
  options: Record<string, { type: 'string' | 'boolean' }>;
  /** Runs before the database is opened: checks the input, reads what it needs from the operator. */
  prepare?(values: Values, io: CommandIo): Promise<unknown>;
  run(context: { values: Values; prepared: unknown; features: Features; config: Config; io: CommandIo }): Promise<number>;
}

/** `disable` and `enable`: the same command but for the state it sets and what it says. */
function setDisabledCommand(disabled: boolean, changed: (email: string) => string, unchanged: (email: string) => string): Subcommand {
  return {
    options: USER_TARGET,
    prepare: async (values) => targetOption(values),
    async run({ prepared, features, io }) {
      const user = await targetUser(features, prepared);
      const done = await features.accounts.setDisabled(user, disabled);
      io.stdout.write(`${done ? changed(user.email) : unchanged(user.email)}\n`);
      return ExitCode.Ok;
    },
  };
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  create: {
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      hint: { type: 'string' },
      kdf: { type: 'string' },
      iterations: { type: 'string' },
      memory: { type: 'string' },
      parallelism: { type: 'string' },
    },
    async prepare(values) {
      const email = emailOption(values);
      const name = text(values, 'name')?.trim() || null;
      if (name !== null && name.length > 50) throw new CommandFailure('--name: at most 50 characters.', ExitCode.Usage);
      const hint = text(values, 'hint') || null;
      if (hint !== null && hint.length > 50) throw new CommandFailure('--hint: at most 50 characters.', ExitCode.Usage);
      return { email, name, hint, kdf: kdfOption(values) };
    },
    async run({ prepared, features, io }) {
      const { email, name, hint, kdf } = prepared as { email: string; name: string | null; hint: string | null; kdf: KdfSettings };
      // The operator's invitation token lets the account in while open registration is off;
      // asking for it first refuses a taken email before the password is typed.
      const token = await features.accounts.operatorInvitationToken(email);
      const password = await readNewPassword(io);
      if (hint !== null && hint.trim() === password.trim()) {
        throw new CommandFailure('The hint must not be the master password.', ExitCode.Usage);
      }
      const keys = await createClientAccountKeys(email, password, kdf);
      const kdfObject = { kdfType: kdf.kdf, iterations: kdf.iterations, memory: kdf.memory, parallelism: kdf.parallelism };
      const user = await features.accounts.registerFinish({
        email,
        name,
        masterPasswordHash: keys.masterPasswordHash,
        masterPasswordHint: hint,
        userSymmetricKey: keys.masterKeyWrappedUserKey,
        userAsymmetricKeys: { publicKey: keys.publicKey, encryptedPrivateKey: keys.encryptedPrivateKey },
        kdf: kdf.kdf,
        kdfIterations: kdf.iterations,
        kdfMemory: kdf.memory,
        kdfParallelism: kdf.parallelism,
        masterPasswordAuthentication: { salt: email, kdf: kdfObject, masterPasswordAuthenticationHash: keys.masterPasswordHash },
        masterPasswordUnlock: { salt: email, kdf: kdfObject, masterKeyWrappedUserKey: keys.masterKeyWrappedUserKey },
        emailVerificationToken: token,
      });
      io.stdout.write(`Created user ${user.email} (${user.id}).\n`);
      return ExitCode.Ok;
    },
  },

  list: {
    options: { json: { type: 'boolean' } },
    async run({ values, features, io }) {
      const users = (await features.accounts.listUsers()).map((u) => ({
        id: u.id,
        email: u.email,
        name: u.name,
        creationDate: u.creation_date,
        disabled: Boolean(u.disabled),
        emailVerified: Boolean(u.email_verified),
        organizations: Number(u.organizations),
      }));
      if (values.json) {
        io.stdout.write(`${JSON.stringify(users, null, 2)}\n`);
      } else if (users.length === 0) {
        io.stdout.write('No users.\n');
      } else {
        const rows = users.map((u) => [
          u.id,
          u.email,
          u.name ?? '',
          u.creationDate.slice(0, 19).replace('T', ' '),
          u.disabled ? 'disabled' : 'enabled',
          u.emailVerified ? 'yes' : 'no',
          String(u.organizations),
        ]);
        io.stdout.write(`${table(['ID', 'EMAIL', 'NAME', 'CREATED (UTC)', 'STATUS', 'VERIFIED', 'ORGS'], rows)}\n`);
      }
      return ExitCode.Ok;
    },
  },

  invite: {
    options: { email: { type: 'string' } },
    async prepare(values) {
      return emailOption(values);
    },
    async run({ prepared, features, io }) {
      const email = prepared as string;
      let invitation: { link: string; mailed: boolean };
      try {
        invitation = await features.accounts.inviteByOperator(COMMAND_CALLER, email);
      } catch (error) {
        if (!(error instanceof InvitationNotMailed)) throw error;
        io.stdout.write(`${error.link}\n`);
        throw new CommandFailure(`The mail server did not take the invitation (${messageOf(error.reason)}); pass on the link printed above.`, ExitCode.MailFailed);
      }
      if (!invitation.mailed) {
        io.stdout.write(`SMTP is not configured (SMTP_HOST), so no mail was sent. Pass this link on to ${email}; it works for ${OPERATOR_INVITATION_DAYS} days:\n${invitation.link}\n`);
        return ExitCode.Ok;
      }
      io.stdout.write(`Sent an invitation to ${email}; the link works for ${OPERATOR_INVITATION_DAYS} days.\n`);
      return ExitCode.Ok;
    },
  },

  disable: setDisabledCommand(true, (email) => `Disabled ${email}; its sessions have ended.`, (email) => `${email} was already disabled.`),
  enable: setDisabledCommand(false, (email) => `Enabled ${email}.`, (email) => `${email} was already enabled.`),

  delete: {
    options: { ...USER_TARGET, yes: { type: 'boolean' } },
    async prepare(values, io) {
      const target = targetOption(values);
      if (!values.yes && !io.stdin.isTTY) {
        throw new CommandFailure('Standard input is not a terminal, so there is no one to confirm the deletion: pass --yes.', ExitCode.Usage);
      }
      return target;
    },
    async run({ values, prepared, features, io }) {
      const user = await targetUser(features, prepared);
      if (!values.yes) {
        const answer = await readLine(io.stdin, io.stderr, `Delete ${user.email} (${user.id}) and everything in its vault? This cannot be undone. [y/N] `);
        if (!/^y(es)?$/i.test(answer.trim())) throw new CommandFailure('Not deleted.', ExitCode.Refused);
      }
      await features.accounts.removeAccount(user);
      io.stdout.write(`Deleted ${user.email}.\n`);
      return ExitCode.Ok;
    },
  },
};

/**
 * `strongroom users …`: returns the exit code. Every failure is reported as one line on
 * standard error; nothing here ends the process.
 */
export async function runUsersCommand(argv: string[], deps: UsersCommandDeps): Promise<number> {
  const { io, config } = deps;
  let opened: Database | undefined;
  let features: Features | undefined;
  try {
    const [name, ...args] = argv;
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      (name === undefined ? io.stderr : io.stdout).write(`${USERS_USAGE}\n`);
      return name === undefined ? ExitCode.Usage : ExitCode.Ok;
    }
    const subcommand = SUBCOMMANDS[name];
    if (!subcommand) throw usage(`Unknown users command "${name}".`);
    const values = parse(args, subcommand.options);
    if (values.help) {
      io.stdout.write(`${USERS_USAGE}\n`);
      return ExitCode.Ok;
    }
    const prepared = await subcommand.prepare?.(values, io);

    const database = deps.database ?? (opened = await openExisting(config, deps.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS));
    features = await createFeatures({ config, database, clock: deps.clock ?? systemClock });
    return await subcommand.run({ values, prepared, features, config, io });
  } catch (error) {
    const [message, code] =
      error instanceof CommandFailure
        ? [error.message, error.exitCode]
        : error instanceof InputAborted
          ? [error.message, ExitCode.Refused]
          : error instanceof BadRequest || error instanceof NotFound
            ? [messageOf(error), ExitCode.Refused]
            : isDatabaseUnavailable(error)
              ? [`The database is unavailable: ${messageOf(error)}`, ExitCode.DatabaseUnavailable]
              : [`Internal error: ${messageOf(error)}`, ExitCode.Internal];
    io.stderr.write(`${message}\n`);
    return code;
  } finally {
    await features?.close().catch(() => undefined);
    await opened?.close().catch(() => undefined);
  }
}
