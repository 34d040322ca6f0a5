import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { anonymousCaller, userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { Email, EmptyResponse, Nullable, emptyOk } from '../../http/schemas.js';
import type { AccountEmails } from './account-emails.service.js';

const tags = ['Accounts'];
const Hash = Type.String({ minLength: 1, maxLength: 1000 });

const VerifyTokenBody = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 50 }), token: Type.String({ minLength: 1, maxLength: 4000 }) });
const HintBody = Type.Object({ email: Email });
const EmailTokenBody = Type.Object({ newEmail: Email, masterPasswordHash: Hash });
const EmailBody = Type.Object({
  newEmail: Email,
  masterPasswordHash: Hash,
  newMasterPasswordHash: Hash,
  token: Type.String({ minLength: 1, maxLength: 50 }),
  key: Type.String({ minLength: 1, maxLength: 10_000 }),
  masterPasswordHint: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
});

const docs = {
  verifyEmail: {
    summary: 'Mail an email verification link',
    description:
      "Mails the caller a link (24 hours) to the web vault's verify-email page; 400 when the address is already verified or after 5 mails in an hour; 502 when the mail server refuses it. Access: a signed-in user.",
  },
  verifyEmailToken: {
    summary: 'Verify the email address',
    description: "The verification link's user id and token mark the account's address verified (the profile's `emailVerified`); 400 naming `token` for a wrong, expired or outdated token. Access: anonymous.",
  },
  passwordHint: {
    summary: 'Mail the master password hint',
    description:
      'Mails the account its master password hint (or that it has none). Always 200 with no body, for unknown addresses and past 3 mails an hour per address too, so the form tells nobody whether an account exists. Access: anonymous.',
  },
  emailToken: {
    summary: 'Start a change of email address',
    description:
      'After the master password hash (400 naming `masterPasswordHash`), mails a 6-digit code (10 minutes, 5 tries) to the new address. An address that already has an account gets no code and the same 200. Access: a signed-in user.',
  },
  email: {
    summary: 'Change the email address',
    description:
      "Takes the code sent to the new address (400 naming `token`), the master password hash, and what the client derived again with the new address as salt: the new master password hash and the re-wrapped user key. The address counts as verified, every session ends (security stamp; LogOut push to the other devices) and the old address is told. Access: a signed-in user.",
  },
} satisfies Record<string, RouteDoc>;

/** `/accounts/*` mail routes: email verification, password hint, change of email. */
export const accountEmailRoutes: FastifyPluginAsyncTypebox<{ accountEmails: AccountEmails }> = async (app, { accountEmails }) => {
  const user = { config: { access: access.user } };
  const anonymous = { config: { access: access.anonymous } };

  app.post('/accounts/verify-email', { ...user, schema: { tags, ...docs.verifyEmail, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accountEmails.sendVerification(userCaller(request));
    return emptyOk(reply);
  });

  app.post('/accounts/verify-email-token', { ...anonymous, schema: { tags, ...docs.verifyEmailToken, body: VerifyTokenBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accountEmails.verifyToken(request.body.userId, request.body.token);
    return emptyOk(reply);
  });

  app.post('/accounts/password-hint', { ...anonymous, schema: { tags, ...docs.passwordHint, body: HintBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accountEmails.passwordHint(anonymousCaller(request), request.body.email);
    return emptyOk(reply);
  });

  app.post('/accounts/email-token', { ...user, schema: { tags, ...docs.emailToken, body: EmailTokenBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accountEmails.startEmailChange(userCaller(request), request.body);
    return emptyOk(reply);
  });

  app.post('/accounts/email', { ...user, schema: { tags, ...docs.email, body: EmailBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accountEmails.changeEmail(userCaller(request), request.body);
    return emptyOk(reply);
  });
};
