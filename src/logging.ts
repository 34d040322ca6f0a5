import type { FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';

/**
 * Secrets never reach the log: the Authorization header is never serialized, query-string
 * tokens are masked, and any logged object's password, hash, key or token fields are redacted.
 */
const SECRET_FIELDS = [
  'password',
  'masterPasswordHash',
  'newMasterPasswordHash',
  'secret',
  'key',
  'privateKey',
  'encryptedPrivateKey',
  'userSymmetricKey',
  'token',
  'access_token',
  'refresh_token',
  'client_secret',
  'apiKey',
  'authorization',
];

export function redactUrl(url: string): string {
  return url.replace(/([?&](?:access_token|token|client_secret|refresh_token)=)[^&]*/gi, '$1[REDACTED]');
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        ...SECRET_FIELDS.map((f) => `*.${f}`),
        ...SECRET_FIELDS.map((f) => `*.*.${f}`),
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
      ],
      censor: '[REDACTED]',
    },
    serializers: {
      req(request: FastifyRequest) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}
