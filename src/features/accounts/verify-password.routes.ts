import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { Nullable } from '../../http/schemas.js';
import type { MasterPasswordPolicyResponse } from '../policies/policies.service.js';
import { SecretVerificationBody } from './accounts.schemas.js';
import type { ProfileService } from './profile.service.js';

const PolicyResponse = Type.Object({
  object: Type.Literal('masterPasswordPolicy'),
  minComplexity: Nullable(Type.Integer()),
  minLength: Nullable(Type.Integer()),
  requireLower: Nullable(Type.Boolean()),
  requireUpper: Nullable(Type.Boolean()),
  requireNumbers: Nullable(Type.Boolean()),
  requireSpecial: Nullable(Type.Boolean()),
  enforceOnLogin: Nullable(Type.Boolean()),
});

/** The token response's PascalCase policy, in the camelCase of the API service. */
function camelPolicy(policy: MasterPasswordPolicyResponse): Static<typeof PolicyResponse> {
  return {
    object: 'masterPasswordPolicy',
    minComplexity: policy.MinComplexity ?? null,
    minLength: policy.MinLength ?? null,
    requireLower: policy.RequireLower ?? null,
    requireUpper: policy.RequireUpper ?? null,
    requireNumbers: policy.RequireNumbers ?? null,
    requireSpecial: policy.RequireSpecial ?? null,
    enforceOnLogin: policy.EnforceOnLogin ?? null,
  };
}

/** POST {base_url}/accounts/verify-password. */
export const verifyPasswordRoutes: FastifyPluginAsyncTypebox<{
  accounts: ProfileService;
  masterPasswordPolicy: (userId: string) => Promise<MasterPasswordPolicyResponse>;
}> = async (app, { accounts, masterPasswordPolicy }) => {
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
        response: { 200: PolicyResponse },
      },
    },
    async (request) => {
      const caller = userCaller(request);
      await accounts.verifyPassword(caller, request.body.masterPasswordHash);
      return camelPolicy(await masterPasswordPolicy(caller.userId));
    },
  );
};
