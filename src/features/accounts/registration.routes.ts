import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import type { RouteDoc } from '../../http/route-docs.js';
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

const tags = ['Accounts'];
const anonymous = { config: { access: access.anonymous } };

const CLOSED = 'Refused when open registration is disabled, unless the email has a pending organization invitation.';

const docs = {
  prelogin: {
    summary: 'Read the KDF settings of an account',
    description:
      'Answers the KDF type, iterations, memory, parallelism and salt the client derives the master key with before logging in; an unknown email gets the defaults (PBKDF2 600,000), so accounts cannot be enumerated. The 2026 CLI calls `/accounts/prelogin/password`, older clients `/accounts/prelogin`. Access: anonymous.',
  },
  sendVerificationEmail: {
    summary: 'Start a registration',
    description: `Answers, as a JSON string, the signed token (valid 24 hours, carrying the name) that finishes the registration at \`/accounts/register/finish\`; no mail is sent, as the official server answers when email verification is off. ${CLOSED} Access: anonymous.`,
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
export const registrationRoutes: FastifyPluginAsyncTypebox<{ accounts: AccountService }> = async (app, { accounts }) => {
  // The 2026 CLI calls /prelogin/password; older clients call /prelogin.
  for (const url of ['/accounts/prelogin', '/accounts/prelogin/password']) {
    app.post(url, { ...anonymous, schema: { tags: ['Identity'], ...docs.prelogin, body: PreloginBody, response: { 200: PreloginResponse } } }, async (request) => {
      const { kdf, salt } = await accounts.prelogin(request.body.email);
      return preloginOf(kdf.kdf, kdf.iterations, kdf.memory, kdf.parallelism, salt);
    });
  }

  app.post(
    '/accounts/register/send-verification-email',
    { ...anonymous, schema: { tags, ...docs.sendVerificationEmail, body: SendVerificationEmailBody, response: { 200: Type.String() } } },
    async (request, reply) => {
      const body = request.body;
      const token = await accounts.verificationToken(body.email, body.name ?? null);
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(token));
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
