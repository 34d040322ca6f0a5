import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { anonymousCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse } from '../../http/schemas.js';
import {
  PreloginBody,
  PreloginResponse,
  RegisterBody,
  RegisterFinishBody,
  RegisterResponse,
  SendVerificationEmailBody,
  VerificationEmailClickedBody,
} from './accounts.schemas.js';
import type { RegistrationService } from './registration.service.js';

const tags = ['Accounts'];
const anonymous = { config: { access: access.anonymous } };

const CLOSED =
  'While open registration is disabled, refused unless the body carries an organization invitation (its token and membership id, for a membership still invited under this email) or the email verification token of a `strongroom users invite` link.';

const docs = {
  prelogin: {
    summary: 'Read the KDF settings of an account',
    description:
      'Answers the KDF type, iterations, memory, parallelism and salt the client derives the master key with before logging in; an unknown email gets the defaults (PBKDF2 600,000), so accounts cannot be enumerated. The 2026 CLI calls `/accounts/prelogin/password`, older clients `/accounts/prelogin`. Access: anonymous.',
  },
  sendVerificationEmail: {
    summary: 'Start a registration',
    description: `With SMTP configured, mails the link that finishes the registration (PUBLIC_URL/#/finish-signup?token=…&email=…&fromEmail=true) and answers 204; an address that already has an account gets no mail and the same answer. Without SMTP, answers the signed token itself (valid 24 hours, carrying the name) as a JSON string, as the official server does when email verification is off. Refused for every address while open registration is disabled, so it tells no one who is invited. Access: anonymous.`,
  },
  verificationEmailClicked: {
    summary: 'Check an opened registration link',
    description: 'The web vault posts this when it opens the mailed link: 200 while the token is valid for that email and the address has no account yet, otherwise 400 with the official expired-link text. Access: anonymous.',
  },
  registerFinish: {
    summary: 'Finish a registration',
    description: `Creates the account from what the client derived: the master password hash, the master-key-wrapped user key, the key pair and the KDF settings (the salt must be the email), in the current clients' masterPasswordAuthentication/masterPasswordUnlock objects or the flat fields, with the optional email verification token. ${CLOSED} Access: anonymous.`,
  },
  register: {
    summary: 'Register an account (older form)',
    description: `Creates an account from the older registration body (master password hash, key, key pair, KDF settings defaulting to PBKDF2 600,000); current clients call \`/accounts/register/finish\`. ${CLOSED} Access: anonymous.`,
    deprecated: true,
  },
} satisfies Record<string, RouteDoc>;

/** The identity service's account routes: registration and prelogin ({auth_url}/accounts/...). */
export const registrationRoutes: FastifyPluginAsyncTypebox<{ accounts: RegistrationService }> = async (app, { accounts }) => {
  // The 2026 CLI calls /prelogin/password; older clients call /prelogin.
  for (const url of ['/accounts/prelogin', '/accounts/prelogin/password']) {
    app.post(url, { ...anonymous, schema: { tags: ['Identity'], ...docs.prelogin, body: PreloginBody, response: { 200: PreloginResponse } } }, async (request) =>
      accounts.prelogin(request.body.email),
    );
  }

  app.post(
    '/accounts/register/send-verification-email',
    {
      ...anonymous,
      schema: {
        tags,
        ...docs.sendVerificationEmail,
        body: SendVerificationEmailBody,
        response: { 200: Type.String({ description: 'The email verification token' }), 204: EmptyResponse },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const started = await accounts.startRegistration(anonymousCaller(request), body.email, body.name ?? null);
      if ('mailed' in started) return reply.code(204).send(null);
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(started.token));
    },
  );

  // The web vault posts this when it opens the mailed link, before it shows the finish form.
  app.post(
    '/accounts/register/verification-email-clicked',
    {
      ...anonymous,
      schema: {
        tags,
        ...docs.verificationEmailClicked,
        body: VerificationEmailClickedBody,
        response: { 200: EmptyResponse },
      },
    },
    async (request, reply) => {
      await accounts.verificationLinkOpened(request.body.email, request.body.emailVerificationToken);
      return emptyOk(reply);
    },
  );

  app.post(
    '/accounts/register/finish',
    { ...anonymous, schema: { tags, ...docs.registerFinish, body: RegisterFinishBody, response: { 200: RegisterResponse } } },
    async (request) => {
      await accounts.registerFinish(request.body);
      return { object: 'registerFinish' as const, captchaBypassToken: null };
    },
  );

  app.post('/accounts/register', { ...anonymous, schema: { tags, ...docs.register, body: RegisterBody, response: { 200: RegisterResponse } } }, async (request) => {
    await accounts.registerLegacy(request.body);
    return { object: 'registerFinish' as const, captchaBypassToken: null };
  });
};
