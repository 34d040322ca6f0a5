import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
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
  // An identity provider's client secret (the SSO settings' `data.clientSecret`).
  'clientSecret',
  'apiKey',
  'authorization',
];

/** Query parameters that carry secrets (tokens, client secrets, an auth request's access `code`) are masked. */
export function redactUrl(url: string): string {
  // ssoToken, user_identifier and state of an SSO login stand for a login in flight.
  return url.replace(/([?&](?:access_token|token|client_secret|refresh_token|code|code_verifier|ssoToken|user_identifier|state|id_token)=)[^&]*/gi, '$1[REDACTED]');
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

/**
 * One log line per request, written when its answer has gone out: the request (method, url with
 * secrets masked, remote address), the answer's status and the response time, under the
 * request's id; Fastify's own two lines (one on arrival, one on completion) cost twice the
 * serialising and writing for the same facts (about a tenth of an item write's CPU). The arrival
 * line is still written at `debug`, for finding requests that never get an answer. A request
 * whose answer fails midway is logged at `error` with the error. Errors the handlers log
 * themselves, 5xx answers included, are logged as before.
 */
export class OneLinePerRequest extends LogController {
  /** The server's logger without the redaction pass (see requestCompleted), made for its first line. */
  #unredacted: FastifyBaseLogger | undefined;

  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
      return;
    }
    // Each field of this line is picked by a serializer (the method, the url with its secrets
    // masked, the address, the status) or is a number, so it skips the redaction pass, which
    // matched each value against every secret field's path: about a tenth of an item write's CPU
    // time (docs/benchmarks.md). The request's id goes under the label, and at the place, the
    // request's own logger gives it.
    this.#unredacted ??= request.server.log.child({}, { redact: [] });
    this.#unredacted.info({ [this.requestIdLogLabel]: request.id, req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** How much log output may wait in memory for a slow reader before new lines are dropped. */
export const LOG_BUFFER_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * The server's log destination: standard output, written without ever blocking the event loop.
 * pino's default destination writes synchronously, so a reader that stops reading (a full pipe)
 * froze every request and the shutdown timer with it, and a reader that went away (EPIPE) could
 * crash the process. Here a full pipe buffers up to a limit and then drops lines, and a vanished
 * reader drops them all; the server goes on serving and stops on time.
 *
 * The lines logged in one turn of the event loop go out in one write, right after it: under load
 * several requests finish in a turn, and a system call per line was a tenth of an item write's
 * CPU time (docs/benchmarks.md, "Item writes, eighth session"). The lines waiting count toward the
 * limit (by their length). The last turn's lines are written when the process exits (not on SIGKILL or a crash of
 * the process itself). Standard error is written at once, so a line there can come before the
 * log lines of the same turn. Made once per process: each call adds an exit listener.
 */
export function stdoutLogStream(out: NodeJS.WritableStream & { writableLength: number; destroyed: boolean } = process.stdout): {
  write(line: string): void;
} {
  out.on('error', () => undefined);
  let waiting: string[] = [];
  let waitingLength = 0;
  const flush = () => {
    const lines = waiting;
    waiting = [];
    waitingLength = 0;
    if (lines.length > 0 && !out.destroyed) out.write(lines.join(''));
  };
  process.once('exit', flush);
  return {
    write(line: string) {
      if (out.destroyed || out.writableLength + waitingLength > LOG_BUFFER_LIMIT_BYTES) return;
      if (waiting.length === 0) setImmediate(flush);
      waiting.push(line);
      waitingLength += line.length;
    },
  };
}
