import { Type, type Static } from 'typebox';
import { EncString, Guid, NullableDateTime, NullableEncString } from '../../http/schemas.js';

/** AttachmentResponseModel: `size` is a string, as Bitwarden writes it. */
export const AttachmentResponseSchema = Type.Object(
  {
    object: Type.Literal('attachment'),
    id: Type.String(),
    url: Type.String(),
    fileName: Type.String(),
    key: Type.Union([Type.String(), Type.Null()]),
    size: Type.String({ pattern: '^[0-9]+$' }),
    sizeName: Type.String(),
  },
  { additionalProperties: false, description: 'An attachment of an item (AttachmentResponseModel); `url` is where it is downloaded' },
);

/** AttachmentRequestModel of `POST /ciphers/{id}/attachment/v2`. */
export const AttachmentRequest = Type.Object({
  key: EncString(1000, { description: "The attachment's own key, encrypted with the item's key" }),
  fileName: EncString(1000, { description: 'The encrypted file name' }),
  fileSize: Type.Integer({ minimum: 0, description: 'Bytes of the encrypted file the client will upload' }),
  adminRequest: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  lastKnownRevisionDate: Type.Optional(NullableDateTime),
});
export type AttachmentRequest = Static<typeof AttachmentRequest>;

/** FileUploadType: Direct 0 (to this server), Azure 1 (never offered here). */
export const FileUploadType = { Direct: 0 } as const;

export const AttachmentParams = Type.Object({ id: Guid, attachmentId: Type.String({ pattern: '^[a-z0-9]{1,64}$', description: 'Attachment id' }) });

export const ShareUploadQuery = Type.Object({ organizationId: Guid });

export const LegacyFields = Type.Object({ key: NullableEncString(1000) });

// The item answers are written as JSON text by cipherJson; these name their shape for the docs.
export const AttachmentUploadResponse = Type.Object(
  {
    object: Type.Literal('attachment-fileUpload'),
    attachmentId: Type.Union([Type.String(), Type.Null()]),
    url: Type.String(),
    fileUploadType: Type.Literal(0),
    cipherResponse: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    cipherMiniResponse: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  },
  { description: 'Where to upload the file (AttachmentUploadDataResponseModel)' },
);

export const DeleteAttachmentResponse = Type.Object(
  { object: Type.Literal('deleteAttachment'), cipher: Type.Object({}, { additionalProperties: true }) },
  { description: 'The item after the deletion (DeleteAttachmentResponseModel)' },
);
