import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { emptyOk, EmptyResponse } from '../../http/schemas.js';
import { SetPasswordBody, type SetPassword } from './set-password.js';

/** POST {base_url}/accounts/set-password: the first master password of an account made without one. */
export const setPasswordRoutes: FastifyPluginAsyncTypebox<{ setPassword: SetPassword }> = async (app, { setPassword }) => {
  app.post(
    '/accounts/set-password',
    {
      config: { access: access.user },
      schema: {
        summary: 'Set a first master password',
        description:
          "An account made without a master password (provisioned just in time by SSO, or unlocking with trusted devices) sets its first one, in the 2026 shape (`masterPasswordAuthentication`, `masterPasswordUnlock`, `accountKeys`; without `accountKeys` when the account already has its keys) or the obsolete one (`masterPasswordHash`, `key`, `keys`, `kdf`…). `orgIdentifier` is the SSO identifier of an organization where the account is a member (400 otherwise). The KDF and salt are checked as registration checks them; the keys are stored when the account has none (required then); User_ChangedPassword (1001) is recorded and an invited membership is accepted. 400 `User already has a master password set.` once it has one. The session goes on. Access: any signed-in user (`user`).",
        tags: ['Accounts'],
        body: SetPasswordBody,
        response: { 200: EmptyResponse },
      },
    },
    async (request, reply) => {
      await setPassword.setPassword(userCaller(request), request.body);
      return emptyOk(reply);
    },
  );
};
