import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { emptyOk, EmptyResponse } from '../../http/schemas.js';
import {
  PreloginBody,
  PreloginResponse,
  preloginOf,
  RegisterBody,
  RegisterFinishBody,
  RegisterResponse,
  SendVerificationEmailBody,
  VerificationEmailClickedBody,
} from './accounts.schemas.js';
import type { AccountService } from './accounts.service.js';

const tags = ['registration'];
const anonymous = { config: { access: access.anonymous } };

/** The identity service's account routes: registration and prelogin ({auth_url}/accounts/...). */
export const registrationRoutes: FastifyPluginAsyncTypebox<{ accounts: AccountService }> = async (app, { accounts }) => {
  // The 2026 CLI calls /prelogin/password; older clients call /prelogin.
  for (const url of ['/accounts/prelogin', '/accounts/prelogin/password']) {
    app.post(url, { ...anonymous, schema: { tags, body: PreloginBody, response: { 200: PreloginResponse } } }, async (request) => {
      const { kdf, salt } = await accounts.prelogin(request.body.email);
      return preloginOf(kdf.kdf, kdf.iterations, kdf.memory, kdf.parallelism, salt);
    });
  }

  app.post(
    '/accounts/register/send-verification-email',
    {
      ...anonymous,
      schema: {
        summary: 'Start registration',
        description:
          'With SMTP configured, mails the link that finishes registration (PUBLIC_URL/#/finish-signup?token=…&email=…&fromEmail=true) and answers 204; an address that already has an account gets no mail and the same answer. Without SMTP, answers the token itself, as the official server does when email verification is off.',
        tags,
        body: SendVerificationEmailBody,
        response: { 200: Type.String({ description: 'The email verification token' }), 204: EmptyResponse },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const started = await accounts.startRegistration(body.email, body.name ?? null, request.log);
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
        summary: 'Registration link opened',
        description: 'Checks the token of a mailed registration link: 200 while it is valid and the address has no account yet, otherwise 400.',
        tags,
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
    { ...anonymous, schema: { tags, body: RegisterFinishBody, response: { 200: RegisterResponse } } },
    async (request) => {
      await accounts.registerFinish(request.body);
      return { object: 'registerFinish' as const, captchaBypassToken: null };
    },
  );

  app.post('/accounts/register', { ...anonymous, schema: { tags, body: RegisterBody, response: { 200: RegisterResponse } } }, async (request) => {
    await accounts.registerLegacy(request.body);
    return { object: 'registerFinish' as const, captchaBypassToken: null };
  });
};
