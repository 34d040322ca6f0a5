import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { SecretVerificationBody, VerifiedPasswordPolicyResponse } from './accounts.schemas.js';
import type { ProfileService } from './profile.service.js';

/** POST {base_url}/accounts/verify-password. */
export const verifyPasswordRoutes: FastifyPluginAsyncTypebox<{ accounts: ProfileService }> = async (app, { accounts }) => {
  app.post(
    '/accounts/verify-password',
    {
      config: { access: access.user },
      schema: {
        summary: 'Check the master password',
        description:
          "The web vault's export and other re-prompting dialogs check the master password hash here first: 400 naming masterPasswordHash when it is wrong, otherwise the strictest master password policy of the caller's organizations.",
        tags: ['Accounts'],
        body: SecretVerificationBody,
        response: { 200: VerifiedPasswordPolicyResponse },
      },
    },
    async (request) => accounts.verifyPassword(userCaller(request), request.body.masterPasswordHash),
  );
};
