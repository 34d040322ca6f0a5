import type { Readable } from 'node:stream';
import { readHiddenLine } from '../shared/terminal-input.js';
import { encryptString } from './client/crypto.js';
import { readProject, smCommand } from './sm-command.js';
import { guidOf, nameOf } from './sm-options.js';
import { printable } from './output.js';
import type { CommandIo } from './users.js';
import { CommandFailure, ExitCode, text } from './options.js';

/**
 * `sm secrets create`: a secret in a project, as the web app's "New secret" dialog makes it. The
 * value is never an option (other users read command lines with ps): it is typed at a hidden
 * prompt, or piped after the password's line.
 */

/** The most a piped value may be: the server's limit on its ciphertext is 35,000 characters. */
const MAX_PIPED_BYTES = 64 * 1024;

/** The server's limits on each field's ciphertext (secrets.schemas.ts), checked here to name the option. */
const CIPHERTEXT_LIMITS = { key: 1000, value: 35000, note: 10000 } as const;

async function readAll(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_PIPED_BYTES) throw new CommandFailure(`Standard input holds more than ${MAX_PIPED_BYTES} bytes; a secret's value is far smaller.`, ExitCode.Usage);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The master password and the secret's value: two hidden prompts at a terminal, or from a pipe
 * the first line (the password) and everything after it (the value, which may span lines, less
 * one final line break).
 */
export async function readPasswordAndValue(io: CommandIo, email: string): Promise<{ password: string; value: string }> {
  let password: string;
  let value: string;
  if (io.stdin.isTTY) {
    password = await readHiddenLine(io.stdin, io.stderr, `Master password of ${email}: `);
    value = await readHiddenLine(io.stdin, io.stderr, 'Value of the secret: ');
  } else {
    const text = await readAll(io.stdin);
    const end = text.indexOf('\n');
    password = (end < 0 ? text : text.slice(0, end)).replace(/\r$/, '');
    value = end < 0 ? '' : text.slice(end + 1).replace(/\r?\n$/, '');
  }
  if (password === '') throw new CommandFailure('No password on standard input (its first line is the master password).', ExitCode.Usage);
  if (value === '') throw new CommandFailure('No value: type it at the prompt, or pipe it after the line of the password.', ExitCode.Usage);
  return { password, value };
}

interface Secret {
  id: string;
}

export const createSecretCommand = smCommand({
  options: { project: { type: 'string' }, key: { type: 'string' }, note: { type: 'string' }, json: { type: 'boolean' } },
  readsValue: true,
  prepare: (values) => ({ project: guidOf(values, 'project'), key: nameOf(values, 'key'), note: text(values, 'note') ?? '' }),
  async run({ session, values, io, value }, { project, key, note }) {
    const target = await readProject(session, project);
    const orgKey = await session.organizationKey(target.organizationId);
    const body = { key: encryptString(key, orgKey), value: encryptString(value ?? '', orgKey), note: encryptString(note, orgKey), projectIds: [project] };
    for (const field of ['key', 'value', 'note'] as const) {
      if (body[field].length > CIPHERTEXT_LIMITS[field]) {
        throw new CommandFailure(`The ${field === 'value' ? 'value' : `--${field}`} is too long: encrypted, it would take ${body[field].length} of the ${CIPHERTEXT_LIMITS[field]} characters the server keeps.`, ExitCode.Usage);
      }
    }
    const made = await session.request<Secret>('POST', `/api/organizations/${target.organizationId}/secrets`, body);
    if (values.json) io.stdout.write(`${JSON.stringify({ id: made.id, organizationId: target.organizationId, projectId: project, key }, null, 2)}\n`);
    else io.stdout.write(`Created secret ${printable(key)} (${made.id}) in project ${project}.\n`);
    return ExitCode.Ok;
  },
});
