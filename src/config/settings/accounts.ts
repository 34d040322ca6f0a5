import { Type } from 'typebox';

/** Account mails and the checks at login that send them. */
export const accountSettings = {
  serverName: Type.String({
    minLength: 1,
    maxLength: 100,
    default: 'Strongroom',
    description: 'The name account mails (two-step login codes, verification, new-device notices) give this server.',
  }),
  twoFactorRememberDays: Type.Integer({
    minimum: 1,
    maximum: 365,
    default: 30,
    description: 'Two-step login: how long a "remember this device" token lets its device skip the second step (a security-stamp change ends them all).',
  }),
  requireVerifiedEmail: Type.Boolean({
    default: false,
    description: 'Refuse password logins until the account has verified its email address (a verification link is mailed when one is refused).',
  }),
  newDeviceLoginMail: Type.Boolean({
    default: true,
    description: 'Mail the account when it logs in from a device it never used (not in its first ten minutes). Without SMTP the notice goes to the log.',
  }),
  newDeviceVerification: Type.Boolean({
    default: false,
    description:
      'The official new-device verification: an account without two-step login, older than a day, that logs in from a new device must enter a code mailed to it (NewDeviceOtp). Needs working mail.',
  }),
  emergencyAccessJobIntervalSeconds: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 3600,
    description:
      'How often the emergency access jobs look for recoveries whose wait is over (granting them) or ends within a day (reminding the grantor); one instance of a fleet runs each, the holder of its lease.',
  }),
};
