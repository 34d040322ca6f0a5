/**
 * The handful of errors that services throw. Each envelope (API, identity, public API)
 * renders them in its own shape in one error handler; nothing else builds error bodies.
 */
export type ValidationErrors = Record<string, string[]>;

export abstract class HttpError extends Error {
  abstract readonly statusCode: number;
  constructor(
    message: string,
    readonly validationErrors?: ValidationErrors,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequest extends HttpError {
  readonly statusCode = 400;
  /** A validation failure of one field: message "The model state is invalid." as Bitwarden says it. */
  static field(field: string, message: string): BadRequest {
    return new BadRequest(MODEL_STATE_INVALID, { [field]: [message] });
  }
}

export class Unauthorized extends HttpError {
  readonly statusCode = 401;
  constructor(message = 'Unauthorized.') {
    super(message);
  }
}

export class Forbidden extends HttpError {
  readonly statusCode = 403;
  constructor(message = 'Forbidden.') {
    super(message);
  }
}

export class NotFound extends HttpError {
  readonly statusCode = 404;
  constructor(message = 'Resource not found.') {
    super(message);
  }
}

export class TooManyRequests extends HttpError {
  readonly statusCode = 429;
  constructor(
    message = 'Too many requests. Try again later.',
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** A dependency the request needs is out of use for now (e.g. the shared rate-limit store in closed mode). */
export class ServiceUnavailable extends HttpError {
  readonly statusCode = 503;
  constructor(
    message = 'The service is temporarily unavailable. Try again later.',
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** An upstream dependency (broker, mail server) failed. */
export class GatewayError extends HttpError {
  readonly statusCode = 502;
}

export const MODEL_STATE_INVALID = 'The model state is invalid.';
