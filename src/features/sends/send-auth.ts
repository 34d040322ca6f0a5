import { BadRequest } from '../../http/errors.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { SendAuthType, type SendRequest, type SendRow } from './sends.schemas.js';

/**
 * The most characters a Send's address list may take once normalized: the official server's
 * limit, which also bounds how many addresses one Send can name.
 */
export const MAX_EMAILS_CHARS = 2500;
/** One address: something before and after a single @, a dot in the domain, no spaces or commas. */
const ADDRESS = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/;

/** How a Send is opened: a password (stored hashed), a list of addresses, or neither. */
export type SendAuth = Pick<SendRow, 'password_hash' | 'emails'>;

/** The addresses of a comma-separated list, trimmed and lowercased, blanks and repeats dropped. */
export function parseEmails(raw: string | null | undefined): string[] {
  const seen = new Set<string>();
  for (const part of (raw ?? '').split(',')) {
    const email = part.trim().toLowerCase();
    if (email !== '') seen.add(email);
  }
  return [...seen];
}

/** The stored form of an email-verified Send's list: each an address, at least one, within the size limit. */
function storedEmails(raw: string | null | undefined): string {
  const emails = parseEmails(raw);
  if (emails.length === 0) throw BadRequest.field('emails', 'An email-verified Send (authType 0) needs at least one address in emails.');
  const wrong = emails.find((email) => email.length > 254 || !ADDRESS.test(email));
  if (wrong !== undefined) throw BadRequest.field('emails', `"${wrong.slice(0, 100)}" is not an email address.`);
  const stored = emails.join(',');
  if (stored.length > MAX_EMAILS_CHARS) throw BadRequest.field('emails', 'The total number of characters in the Emails field must not exceed 2,500 characters.');
  return stored;
}

/**
 * What a create or edit leaves as the Send's password and addresses (SendRequestModel's rules):
 * `authType` decides when given, and the other method's data is dropped; older clients send no
 * `authType`, and then addresses make the Send email-verified, else a password protects it, else
 * the Send keeps what it had. The official server opens an email-verified Send there instead;
 * but those clients never show the addresses, so an edit of its name from one would silently
 * open the Send to anyone with the link. The answer is a function of the stored row (null when
 * creating), called inside the writing transaction.
 */
export async function authFor(hasher: PasswordHasher, request: SendRequest): Promise<(existing: SendAuth | null) => SendAuth> {
  // Hashed here, before the caller's transaction, so the hash holds no lock; the choice that
  // needs the stored row waits for it.
  const usesPassword = request.authType === SendAuthType.Password || (request.authType !== SendAuthType.Email && request.authType !== SendAuthType.None && parseEmails(request.emails).length === 0);
  const hash = request.password && usesPassword ? await hasher.hash(request.password) : null;
  return (existing) => {
    switch (request.authType) {
      case SendAuthType.Email:
        return { password_hash: null, emails: storedEmails(request.emails) };
      case SendAuthType.Password:
        // A new password replaces the old one; an edit without one keeps it.
        if (hash) return { password_hash: hash, emails: null };
        if (existing?.password_hash) return { password_hash: existing.password_hash, emails: null };
        throw BadRequest.field('password', 'A password is required.');
      case SendAuthType.None:
        return { password_hash: null, emails: null };
      default:
        if (parseEmails(request.emails).length > 0) return { password_hash: null, emails: storedEmails(request.emails) };
        if (hash) return { password_hash: hash, emails: null };
        return { password_hash: existing?.password_hash ?? null, emails: existing?.emails ?? null };
    }
  };
}
