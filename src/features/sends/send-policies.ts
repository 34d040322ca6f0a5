import type { Executor } from '../../db/database.js';
import { BadRequest } from '../../http/errors.js';
import { PolicyType } from '../policies/policy-type.js';
import { bindingPolicies } from './sends.repository.js';
import type { SendRow } from './sends.schemas.js';

export const DISABLE_SEND = 'Due to an Enterprise Policy, you are only able to delete an existing Send.';
export const HIDE_EMAIL_DISALLOWED =
  'Due to an Enterprise Policy, you are not allowed to hide your email address from recipients when creating or editing a Send.';

/** What the policies look at: the Send as it would be saved. */
export type SendCandidate = Pick<SendRow, 'hide_email'>;

function dataOf(policy: { data: string | null }): { disableHideEmail?: unknown } {
  if (!policy.data) return {};
  try {
    const data: unknown = JSON.parse(policy.data);
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {};
  } catch {
    return {};
  }
}

/**
 * Refuses (400, with the official texts) a Send that the policies binding the user forbid:
 * Disable Send (6) and Send options (7). Owners and admins are exempt (bindingPolicies).
 */
export async function assertSendAllowed(executor: Executor, userId: string, send: SendCandidate): Promise<void> {
  if ((await bindingPolicies(executor, userId, PolicyType.DisableSend)).length > 0) throw new BadRequest(DISABLE_SEND);
  if (send.hide_email) {
    for (const policy of await bindingPolicies(executor, userId, PolicyType.SendOptions)) {
      if (dataOf(policy).disableHideEmail === true) throw new BadRequest(HIDE_EMAIL_DISALLOWED);
    }
  }
}
