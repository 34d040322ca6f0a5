import type { MailMessage } from '../mail/mailer.js';

/**
 * The mails of emergency access, one per step as the official server sends them: plain text
 * with the one link or fact each needs. Without SMTP the mailer logs them, links included.
 */

/** The name a mail calls an account by: its name, else its email (the official NameOrEmail). */
export function called(user: { name: string | null; email: string }): string {
  return user.name?.trim() ? user.name : user.email;
}

const days = (n: number) => `${n} day${n === 1 ? '' : 's'}`;

/** The invitation, with the link to the web vault's accept page (`/#/accept-emergency`, the clients' route). */
export function inviteMail(to: string, grantor: string, link: string, lifetimeDays: number): MailMessage {
  return {
    to,
    subject: 'Emergency access contact invited',
    text: [
      `${grantor} has invited you to be an emergency contact.`,
      '',
      `Open this link to accept the invitation (it expires in ${days(lifetimeDays)}):`,
      link,
      '',
      'If you do not have an account on this server yet, create one with this email address first, then open the link again.',
    ].join('\n'),
  };
}

export function acceptedMail(to: string, grantee: string): MailMessage {
  return {
    to,
    subject: 'Accepted emergency access',
    text: `${grantee} has accepted your invitation to be an emergency contact. Confirm them in Settings > Emergency access so they can ask for access.`,
  };
}

export function confirmedMail(to: string, grantor: string): MailMessage {
  return { to, subject: 'You have been confirmed as an emergency contact', text: `${grantor} has confirmed you as an emergency contact.` };
}

export function initiatedMail(to: string, grantee: string, type: 'view' | 'takeover', waitTimeDays: number): MailMessage {
  return {
    to,
    subject: 'Emergency access initiated',
    text: [
      `${grantee} has asked for emergency access to ${type === 'view' ? 'view' : 'take over'} your account.`,
      '',
      `Unless you reject the request in Settings > Emergency access, access is granted automatically in ${days(waitTimeDays)}.`,
    ].join('\n'),
  };
}

export function reminderMail(to: string, grantee: string, type: 'view' | 'takeover', leftDays: number): MailMessage {
  return {
    to,
    subject: 'Pending emergency access request',
    text: [
      `${grantee} is waiting for emergency access to ${type === 'view' ? 'view' : 'take over'} your account.`,
      '',
      `Unless you reject the request in Settings > Emergency access, access is granted automatically in ${days(Math.max(leftDays, 0))}.`,
    ].join('\n'),
  };
}

export function approvedMail(to: string, grantor: string): MailMessage {
  return { to, subject: 'Emergency access approved', text: `Your emergency access request to ${grantor}'s account has been approved. Open Settings > Emergency access to use it.` };
}

export function rejectedMail(to: string, grantor: string): MailMessage {
  return { to, subject: 'Emergency access rejected', text: `${grantor} has rejected your emergency access request.` };
}

export function timedOutMail(to: string, grantee: string, type: 'view' | 'takeover'): MailMessage {
  return {
    to,
    subject: 'Emergency access granted',
    text: `The wait time has passed: ${grantee} now has emergency access to ${type === 'view' ? 'view' : 'take over'} your account.`,
  };
}
