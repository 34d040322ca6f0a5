import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, emptyOk } from '../../http/schemas.js';
import type { UserVerificationCodes } from './user-verification.js';

const tags = ['Accounts'];

/** The official VerifyOTPRequestModel. */
const VerifyOtpBody = Type.Object({ otp: Type.String({ minLength: 1, maxLength: 100 }) });

const docs = {
  requestOtp: {
    summary: 'Mail a verification code',
    description:
      "Mails the caller a six-digit code (10 minutes, 5 tries, once) that stands for the master password where the server asks for it (`otp` or `secret` of the secret verification: API key, log out everywhere, deletion, two-step login settings, vault purge, organization deletion, passkeys): the way accounts without a master password (SSO with trusted devices) verify themselves, as officially. 400 after 5 codes in 10 minutes; 502 when the mail server refuses it. Access: any signed-in user (`user`).",
  },
  verifyOtp: {
    summary: 'Check a verification code',
    description:
      'Checks a code `request-otp` mailed, without spending it (the clients send it again with the request it verifies); a wrong one counts toward its tries; 400 naming `otp` when it is wrong, expired or used. Access: any signed-in user (`user`).',
  },
} satisfies Record<string, RouteDoc>;

/** POST {base_url}/accounts/request-otp and /accounts/verify-otp. */
export const userVerificationRoutes: FastifyPluginAsyncTypebox<{ codes: UserVerificationCodes }> = async (app, { codes }) => {
  const user = { config: { access: access.user } };
  app.post('/accounts/request-otp', { ...user, schema: { tags, ...docs.requestOtp, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await codes.requestOtp(userCaller(request));
    return emptyOk(reply);
  });
  app.post('/accounts/verify-otp', { ...user, schema: { tags, ...docs.verifyOtp, body: VerifyOtpBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await codes.verifyOtp(userCaller(request), request.body.otp);
    return emptyOk(reply);
  });
};
