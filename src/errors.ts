/**
 * The one error type of Cairn. Every error that reaches a client is an ApiError, rendered as
 * `{data, message, status, code}` (API contract §3: `status` as PocketBase ≥ 0.23 names it, `code`
 * as v0.22 did, both the HTTP status). Domain code throws these through the factories below;
 * anything else that escapes is a fault and becomes a bare 500.
 */

export interface FieldError {
  code: string;
  message: string;
}

export type ErrorData = Record<string, FieldError | unknown>;

/**
 * An error as it leaves (API contract §3), in the order PocketBase ≥ 0.23 writes its error (`data`,
 * `message`, `status`: a struct's order), then v0.22's `code` beside `status`.
 */
export interface ErrorBody {
  data: ErrorData;
  message: string;
  status: number;
  code: number;
}

export class ApiError extends Error {
  readonly status: number;
  readonly data: ErrorData;
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers?: Record<string, string>;
  /** Keys beside `code`, `message` and `data` that a client reads from the body (MFA's `mfaId`). */
  readonly extra?: Record<string, string>;

  constructor(status: number, message: string, data: ErrorData = {}, headers?: Record<string, string>, extra?: Record<string, string>) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.data = data;
    this.headers = headers;
    this.extra = extra;
  }

  toJSON(): ErrorBody {
    return { ...this.extra, data: this.data, message: this.message, status: this.status, code: this.status };
  }
}

export function fieldError(code: string, message: string): FieldError {
  return { code, message };
}

export const badRequest = (message = 'Something went wrong while processing your request.', data: ErrorData = {}) =>
  new ApiError(400, message, data);

/** A 400 carrying per-field validation errors, as PocketBase answers a failed record or collection save. */
export const validationFailed = (data: Record<string, FieldError>, message = 'Failed to validate the submitted data.') =>
  new ApiError(400, message, data);

export const unauthorized = (message = 'The request requires valid authorization token.') => new ApiError(401, message);

export const forbidden = (message = 'You are not allowed to perform this request.') => new ApiError(403, message);

export const notFound = (message = "The requested resource wasn't found.") => new ApiError(404, message);

export const conflict = (message: string, data: ErrorData = {}) => new ApiError(409, message, data);

export const tooLarge = (message = 'Request entity too large.') => new ApiError(413, message);

export const unsupportedMediaType = (message = 'Unsupported Media Type.') => new ApiError(415, message);

export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(429, 'Too many requests.', {}, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

/**
 * A first factor that succeeded where the collection asks for a second one (PocketBase ≥ 0.23's MFA):
 * a 401 whose body also carries the `mfaId` the second sign-in must send.
 */
export const mfaRequired = (mfaId: string) =>
  new ApiError(401, 'Multi-factor authentication required: sign in again with another method and this mfaId.', {}, undefined, { mfaId });

export const internal = () => new ApiError(500, 'Something went wrong while processing your request.');

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
