import type { Executor } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';
import { PolicyType } from '../policies/policy-type.js';
import { bindingPolicies } from '../policies/policies.repository.js';
import { SendType, type SendRow } from './sends.schemas.js';
import { parseEmails } from './send-auth.js';

export const DISABLE_SEND = 'Due to an Enterprise Policy, you are only able to delete an existing Send.';
export const HIDE_EMAIL_DISALLOWED =
  'Due to an Enterprise Policy, you are not allowed to hide your email address from recipients when creating or editing a Send.';

/** SendControlsPolicyData.whoCanAccess (SendWhoCanAccessType): who a member's Sends may be opened by. */
export enum SendWhoCanAccess {
  Any = 0,
  PasswordProtected = 1,
  SpecificPeople = 2,
}

/** The data of a Send controls policy (type 21), as the web vault writes it. */
interface SendControlsData {
  disableSend?: unknown;
  disableHideEmail?: unknown;
  whoCanAccess?: unknown;
  allowedDomains?: unknown;
  deletionHours?: unknown;
  allowedSendTypes?: unknown;
}

/** What the policies look at: the Send as it would be saved. */
export type SendCandidate = Pick<SendRow, 'type' | 'hide_email' | 'password_hash' | 'emails' | 'creation_date' | 'deletion_date'>;

function dataOf(policy: { data: string | null }): SendControlsData {
  if (!policy.data) return {};
  try {
    const data: unknown = JSON.parse(policy.data);
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {};
  } catch {
    return {};
  }
}

const splitList = (text: string) => text.split(',').map((d) => d.trim().toLowerCase()).filter((d) => d !== '');

/** Whether every address is at one of the domains or below one (`mail.example.com` for `example.com`). */
function emailsWithinDomains(emails: readonly string[], domains: readonly string[]): boolean {
  if (domains.length === 0) return true;
  return emails.every((email) => {
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    return domains.some((allowed) => domain === allowed || domain.endsWith(`.${allowed}`));
  });
}

function hoursText(hours: number): string {
  if (hours >= 24) {
    const days = Math.floor(hours / 24);
    return `${days} day${days > 1 ? 's' : ''}`;
  }
  return `${hours} hour${hours > 1 ? 's' : ''}`;
}

/** One Send controls policy's refusal of the Send, or null when the Send meets it. */
function sendControlsRefusal(data: SendControlsData, send: SendCandidate): string | null {
  if (data.disableSend === true) return DISABLE_SEND;
  if (data.disableHideEmail === true && send.hide_email) return HIDE_EMAIL_DISALLOWED;
  if (data.whoCanAccess === SendWhoCanAccess.PasswordProtected && !send.password_hash) return 'Due to an Enterprise policy your Sends must be protected by password';
  if (data.whoCanAccess === SendWhoCanAccess.SpecificPeople) {
    if (!send.emails) return 'Due to an Enterprise policy your Sends must be protected by email verification';
    const domains = typeof data.allowedDomains === 'string' ? splitList(data.allowedDomains) : [];
    if (!emailsWithinDomains(parseEmails(send.emails), domains)) {
      return `Due to an Enterprise policy your Sends must be protected by email verification and access granted only to the following domain(s): ${domains.join(', ')}`;
    }
  }
  if (Array.isArray(data.allowedSendTypes) && !data.allowedSendTypes.includes(send.type)) {
    const names = data.allowedSendTypes.map((t) => (t === SendType.Text ? 'Text' : t === SendType.File ? 'File' : 'Unknown'));
    return `Due to an Enterprise policy your Sends must be of the following types: ${names.join(', ')}`;
  }
  if (typeof data.deletionHours === 'number') {
    // A minute of leeway between the client's clock and the server's, as the official server allows.
    const hours = (Date.parse(send.deletion_date) - 60_000 - Date.parse(send.creation_date)) / 3_600_000;
    if (hours > data.deletionHours) return `Due to an Enterprise policy your Sends must have deletion dates no more than ${hoursText(data.deletionHours)} from their creation dates`;
  }
  return null;
}

/**
 * Refuses (400, with the official texts) a Send that the policies binding the user forbid:
 * Disable Send (6), Send options (7) and Send controls (21), which gathers both and adds who may
 * open a Send, the domains of its addresses, its types and how long it may live. Owners and
 * admins are exempt (bindingPolicies). Every binding Send controls policy must be met; the
 * official server reads the first that sets each field, in no set order.
 */
export async function assertSendAllowed(executor: Executor, userId: string, send: SendCandidate): Promise<void> {
  const policies = await bindingPolicies(executor, userId, [PolicyType.DisableSend, PolicyType.SendOptions, PolicyType.SendControls]);
  const ofType = (type: PolicyType) => policies.filter((policy) => policy.type === (type as number));
  if (ofType(PolicyType.DisableSend).length > 0) throw new BadRequest(DISABLE_SEND);
  if (send.hide_email) {
    for (const policy of ofType(PolicyType.SendOptions)) {
      if (dataOf(policy).disableHideEmail === true) throw new BadRequest(HIDE_EMAIL_DISALLOWED);
    }
  }
  for (const policy of ofType(PolicyType.SendControls)) {
    const refusal = sendControlsRefusal(dataOf(policy), send);
    if (refusal) throw new BadRequest(refusal);
  }
}
