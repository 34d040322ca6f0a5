import { Type } from 'typebox';

/** Attachment and Send files: where they live and how large they may be, and Send access. */
export const fileSettings = {
  filesDir: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'Directory for attachment and Send files (the encrypted bytes the clients upload). Defaults to DATA_DIR/files.',
    }),
  ),
  attachmentUserQuotaMb: Type.Integer({
    minimum: 0,
    maximum: 10_485_760,
    default: 1024,
    description: "Storage each user's personal item attachments may take, in MB (organizations have their plan's storage).",
  }),
  fileMaxMb: Type.Integer({
    minimum: 1,
    maximum: 500,
    default: 500,
    description: 'Largest attachment or Send file, in MB (500 as the official server).',
  }),
  fileStorage: Type.Enum(['local', 's3'], {
    default: 'local',
    description: 'Where attachment and Send files live: local (FILES_DIR) or s3 (an S3-compatible bucket, S3_BUCKET, for several instances).',
  }),
  s3Bucket: Type.Optional(Type.String({ minLength: 1, description: 'FILE_STORAGE=s3: the bucket.' })),
  s3Region: Type.String({ minLength: 1, default: 'us-east-1', description: "FILE_STORAGE=s3: the bucket's region." }),
  s3Endpoint: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s]+$',
      expected: 'an http:// or https:// URL such as http://127.0.0.1:9000',
      description: 'FILE_STORAGE=s3: the URL of an S3-compatible service (MinIO, Ceph, R2, …); AWS S3 when unset.',
    }),
  ),
  s3ForcePathStyle: Type.Boolean({ default: false, description: 'FILE_STORAGE=s3: address the bucket in the path (most S3-compatible services want this).' }),
  s3AccessKeyId: Type.Optional(Type.String({ minLength: 1, description: 'FILE_STORAGE=s3: access key id (else the AWS default credential chain).' })),
  s3SecretAccessKey: Type.Optional(Type.String({ minLength: 1, secret: true, description: 'FILE_STORAGE=s3: secret access key.' })),
  s3Prefix: Type.String({ default: '', description: 'FILE_STORAGE=s3: put before every object key, e.g. strongroom/.' }),
  sendAccessPerMinute: Type.Integer({
    minimum: 0,
    maximum: 100_000,
    default: 60,
    description: 'Send accesses (opening a Send, fetching its file, asking for its access token) one client address may make a minute; 0 turns the limit off.',
  }),
  sendPurgeIntervalSeconds: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 600,
    description:
      'How often the Send purge looks for Sends past their deletion date (one instance of a fleet does it, the holder of its lease; the others skip).',
  }),
};
