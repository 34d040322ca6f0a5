import { Type, type Static } from 'typebox';
import { Email, Guid, Nullable, NullableDateTime } from '../../http/schemas.js';
import type { AuthRequestWithDevice } from './auth-requests.repository.js';
import { deviceTypeName } from '../devices/device-types.js';

/** The official AuthRequestType. */
export enum AuthRequestType {
  AuthenticateAndUnlock = 0,
  Unlock = 1,
  AdminApproval = 2,
}

/** The official AuthRequestCreateRequestModel. */
export const CreateAuthRequestBody = Type.Object({
  email: Email,
  publicKey: Type.String({ minLength: 1, maxLength: 10_000, description: "The asking device's RSA public key (base64 SPKI); the approving device encrypts the user key to it." }),
  deviceIdentifier: Type.String({ minLength: 1, maxLength: 50, description: "The asking device's identifier, as it will send it when logging in." }),
  accessCode: Type.String({ minLength: 1, maxLength: 25, description: 'A secret the asking device made; it reads the answer and logs in with it.' }),
  type: Type.Integer({ minimum: 0, maximum: 2, description: '0 AuthenticateAndUnlock (log in), 1 Unlock; 2 AdminApproval only through `POST /auth-requests/admin-request`.' }),
});
export type CreateAuthRequestBody = Static<typeof CreateAuthRequestBody>;

/** The official AuthRequestUpdateRequestModel. */
export const AnswerAuthRequestBody = Type.Object({
  key: Type.Optional(Nullable(Type.String({ maxLength: 10_000, description: 'The user key encrypted to the request\'s public key; required to approve.' }))),
  masterPasswordHash: Type.Optional(Nullable(Type.String({ maxLength: 10_000, description: 'The master password hash encrypted to the request\'s public key (older clients).' }))),
  deviceIdentifier: Type.String({ minLength: 1, maxLength: 50, description: "The answering device's identifier; it must be one of the user's devices." }),
  requestApproved: Type.Boolean(),
});
export type AnswerAuthRequestBody = Static<typeof AnswerAuthRequestBody>;

export const ResponseCodeQuery = Type.Object({ code: Type.String({ minLength: 1, maxLength: 25, description: 'The access code the asking device made.' }) });

/** The official AuthRequestResponseModel (object `auth-request`). */
export const AuthRequestResponse = Type.Object({
  object: Type.Literal('auth-request'),
  id: Guid,
  publicKey: Type.String(),
  requestDeviceIdentifier: Type.String(),
  requestDeviceTypeValue: Type.Integer(),
  requestDeviceType: Nullable(Type.String()),
  requestIpAddress: Nullable(Type.String()),
  requestCountryName: Nullable(Type.String()),
  key: Nullable(Type.String()),
  masterPasswordHash: Nullable(Type.String()),
  creationDate: Type.String({ format: 'date-time' }),
  responseDate: NullableDateTime,
  requestApproved: Type.Boolean(),
  origin: Type.String({ description: 'The host of the web vault the request was made through.' }),
  /** The user's device id of the asking device, once that device has logged in; null before. */
  requestDeviceId: Nullable(Guid),
});
export type AuthRequestResponse = Static<typeof AuthRequestResponse>;

/**
 * The official PendingAuthRequestResponseModel. Officially only the pending list carries
 * `requestDeviceId`; the clients read it from every answer (one AuthRequestResponse), so all carry it.
 */
export const PendingAuthRequestResponse = AuthRequestResponse;
export type PendingAuthRequestResponse = Static<typeof PendingAuthRequestResponse>;

export function toAuthRequestResponse(row: AuthRequestWithDevice, origin: string): AuthRequestResponse {
  return {
    object: 'auth-request',
    id: row.id,
    publicKey: row.public_key,
    requestDeviceIdentifier: row.request_device_identifier,
    requestDeviceTypeValue: row.request_device_type,
    requestDeviceType: deviceTypeName(row.request_device_type) ?? null,
    requestIpAddress: row.request_ip_address,
    requestCountryName: null,
    key: row.key,
    masterPasswordHash: row.master_password_hash,
    creationDate: row.creation_date,
    responseDate: row.response_date,
    requestApproved: Boolean(row.approved),
    origin,
    requestDeviceId: row.request_device_id,
  };
}
