import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { EmptyResponse, emptyOk } from '../../http/schemas.js';
import type { KeyRotation } from './key-rotation.service.js';
import { KeyRotationDataResponse, ROTATION_LIMITS, RotateUserAccountKeysRequest } from './key-rotation.schemas.js';

const tags = ['Accounts'];
const USER = 'Access: any signed-in user (`user`), on their own account.';

/** POST {base_url}/accounts/key-management/rotate-user-account-keys and GET …/key-rotation-data. */
export const keyRotationRoutes: FastifyPluginAsyncTypebox<{ keyRotation: KeyRotation }> = async (app, { keyRotation }) => {
  app.post(
    '/accounts/key-management/rotate-user-account-keys',
    {
      config: { access: access.user, bodySize: 'large', callerLimit: 'import' },
      schema: {
        summary: "Rotate the account's user key",
        description:
          `Replaces the user key: checks the current master password (oldMasterKeyAuthenticationHash), takes every personal item (trash included), folder and Send re-encrypted with the new key, the key re-wrapped for every emergency contact, every organization the account is enrolled in account recovery with and every passkey that unlocks the vault (passkeyUnlockData), the private key re-wrapped (the public key stays) and the master password wrapping the new key (same email and KDF; the password itself may change). Anything left out, sent twice or not the account's is refused with a 400 and nothing is written; otherwise all of it is written in one transaction, emergency access in recovery goes back to confirmed, User_RotatedKeys (9001) is recorded and every session ends. At most ${ROTATION_LIMITS.ciphers} items, ${ROTATION_LIMITS.folders} folders and ${ROTATION_LIMITS.sends} Sends, within the large body limit. ` +
          USER,
        tags,
        body: RotateUserAccountKeysRequest,
        response: { 200: EmptyResponse },
      },
    },
    async (request, reply) => {
      await keyRotation.rotate(userCaller(request), request.body);
      return emptyOk(reply);
    },
  );

  app.get(
    '/accounts/key-management/key-rotation-data',
    {
      config: { access: access.user },
      schema: {
        summary: 'Read what a key rotation re-wraps the user key for',
        description:
          "The public keys a rotation wraps the new user key with: each organization the caller is enrolled in account recovery with, each emergency contact holding the caller's key, and each passkey that unlocks the vault (passkeyKeyData, with its public key encrypted with the current user key). Trusted-device keys are not stored, so that list is empty. " +
          USER,
        tags,
        response: { 200: KeyRotationDataResponse },
      },
    },
    async (request) => keyRotation.rotationData(userCaller(request)),
  );
};
