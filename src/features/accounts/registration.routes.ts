import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import {
  PreloginBody,
  PreloginResponse,
  preloginOf,
  RegisterBody,
  RegisterFinishBody,
  RegisterResponse,
  SendVerificationEmailBody,
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
    { ...anonymous, schema: { tags, body: SendVerificationEmailBody, response: { 200: Type.String() } } },
    async (request, reply) => {
      const body = request.body;
      const token = await accounts.verificationToken(body.email, body.name ?? null);
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(token));
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
