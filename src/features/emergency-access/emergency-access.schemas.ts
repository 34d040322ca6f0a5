import { Type, type Static } from 'typebox';
import { Email, EncString, Guid, Nullable } from '../../http/schemas.js';
import { MasterPasswordAuthenticationBody, MasterPasswordUnlockBody } from '../../platform/auth/master-password.js';
import { CipherResponse } from '../vault/ciphers.schemas.js';
import type { EmergencyAccessRow, GrantDetailsRow } from './emergency-access.repository.js';
import { EmergencyAccessType } from './emergency-access-status.js';

/** The official `[Range(1, short.MaxValue)]` of the request models. */
const WaitTimeDays = Type.Integer({ minimum: 1, maximum: 32_767, description: 'Days the grantor has to reject a recovery before it is granted' });
const AccessType = Type.Union([Type.Literal(EmergencyAccessType.View), Type.Literal(EmergencyAccessType.Takeover)], { description: '0 view, 1 takeover' });

/** EmergencyAccessInviteRequestModel. */
export const InviteBody = Type.Object({ email: Email, type: AccessType, waitTimeDays: WaitTimeDays });
export type InviteBody = Static<typeof InviteBody>;

/** EmergencyAccessUpdateRequestModel: `keyEncrypted` replaces the wrapped key only on a confirmed grant. */
export const UpdateBody = Type.Object({
  type: AccessType,
  waitTimeDays: WaitTimeDays,
  keyEncrypted: Type.Optional(Nullable(EncString(10_000, { description: "The grantor's user key wrapped with the grantee's public key" }))),
});
export type UpdateBody = Static<typeof UpdateBody>;

/** The accept body the web vault sends from the invitation link (OrganizationUserAcceptRequestModel). */
export const AcceptBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 4000 }) });

/** OrganizationUserConfirmRequestModel: the grantor's user key wrapped with the grantee's public key. */
export const ConfirmBody = Type.Object({ key: EncString(10_000, { description: "The grantor's user key wrapped with the grantee's public key" }) });

/**
 * EmergencyAccessPasswordRequestModel: the legacy pair (`newMasterPasswordHash`, `key`) or the
 * 2026 pair of objects (`authenticationData`, `unlockData`); one of the two must be complete.
 */
export const PasswordBody = Type.Object({
  newMasterPasswordHash: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 300 }))),
  key: Type.Optional(Nullable(EncString(10_000))),
  authenticationData: Type.Optional(Nullable(MasterPasswordAuthenticationBody)),
  unlockData: Type.Optional(Nullable(MasterPasswordUnlockBody)),
});
export type PasswordBody = Static<typeof PasswordBody>;

/** `/{id}/{cipherId}/attachment/{attachmentId}` path parameters. */
export const AttachmentParams = Type.Object({ id: Guid, cipherId: Guid, attachmentId: Type.String({ pattern: '^[a-z0-9]{1,64}$', description: 'Attachment id' }) });

const base = {
  id: Guid,
  status: Type.Integer({ description: '0 invited, 1 accepted, 2 confirmed, 3 recovery initiated, 4 recovery approved' }),
  type: Type.Integer({ description: '0 view, 1 takeover' }),
  waitTimeDays: Type.Integer(),
};

/** EmergencyAccessGranteeDetailsResponseModel: a grant as its grantor sees it. */
export const GranteeDetailsResponse = Type.Object(
  {
    object: Type.Literal('emergencyAccessGranteeDetails'),
    ...base,
    granteeId: Nullable(Guid),
    name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    avatarColor: Nullable(Type.String()),
    creationDate: Type.String({ format: 'date-time', description: 'When the grant was made (the invitation)' }),
  },
  { additionalProperties: false },
);
export type GranteeDetailsResponse = Static<typeof GranteeDetailsResponse>;

/** EmergencyAccessGrantorDetailsResponseModel: a grant as its grantee sees it. */
export const GrantorDetailsResponse = Type.Object(
  {
    object: Type.Literal('emergencyAccessGrantorDetails'),
    ...base,
    grantorId: Guid,
    name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    avatarColor: Nullable(Type.String()),
    creationDate: Type.String({ format: 'date-time', description: 'When the grant was made (the invitation)' }),
  },
  { additionalProperties: false },
);
export type GrantorDetailsResponse = Static<typeof GrantorDetailsResponse>;

/** EmergencyAccessTakeoverResponseModel: what the grantee needs to set the grantor's new password. */
export const TakeoverResponse = Type.Object(
  {
    object: Type.Literal('emergencyAccessTakeover'),
    keyEncrypted: Type.String(),
    kdf: Type.Integer(),
    kdfIterations: Type.Integer(),
    kdfMemory: Nullable(Type.Integer()),
    kdfParallelism: Nullable(Type.Integer()),
    salt: Type.String({ description: "The grantor's master password salt, which the new master key must be derived with" }),
  },
  { additionalProperties: false },
);
export type TakeoverResponse = Static<typeof TakeoverResponse>;

/**
 * EmergencyAccessViewResponseModel; the items are the vault's `cipher` answers, written as JSON
 * text by the vault's writers, so the route sets the schema of the envelope only.
 */
export const ViewResponse = Type.Object(
  {
    object: Type.Literal('emergencyAccessView'),
    keyEncrypted: Type.String(),
    ciphers: Type.Array(CipherResponse, { description: "The grantor's personal items (CipherResponseModel)" }),
  },
  { description: 'EmergencyAccessViewResponseModel' },
);

export function toGranteeDetails(row: GrantDetailsRow): GranteeDetailsResponse {
  return {
    object: 'emergencyAccessGranteeDetails',
    ...baseOf(row),
    granteeId: row.grantee_id,
    name: row.grantee_name,
    // An invitation not yet accepted names its address; then the grantee's account does.
    email: row.grantee_email ?? row.email,
    avatarColor: row.grantee_avatar_color,
    creationDate: row.creation_date,
  };
}

export function toGrantorDetails(row: GrantDetailsRow): GrantorDetailsResponse {
  return {
    object: 'emergencyAccessGrantorDetails',
    ...baseOf(row),
    grantorId: row.grantor_id,
    name: row.grantor_name,
    email: row.grantor_email,
    avatarColor: row.grantor_avatar_color,
    creationDate: row.creation_date,
  };
}

function baseOf(row: EmergencyAccessRow) {
  return { id: row.id, status: row.status, type: row.type, waitTimeDays: row.wait_time_days };
}
