/**
 * PocketBase's router errors as pb_hooks code throws them (`throw new BadRequestError("…")`), and the
 * two conversions of an error crossing between the runtime and its host: `serialize` (out) and
 * `revive` (in). Plain module state: the classes hold nothing per runtime.
 */
export class ApiError extends Error {
  status: number;
  data: any;
  constructor(status = 400, message: any = 'Something went wrong while processing your request.', data: any = {}) {
    super(typeof message === 'string' ? message : String(message));
    this.status = status;
    this.data = data ?? {};
  }
}

// Named through a computed key so each class's `name` (and a stack's first line) is PocketBase's.
const errorClass = (name: string, status: number, fallback: string) =>
  ({
    [name]: class extends ApiError {
      constructor(message?: string, data?: any) {
        super(status, message || fallback, data);
        this.name = name;
      }
    },
  })[name];

export const BadRequestError = errorClass('BadRequestError', 400, 'Something went wrong while processing your request.');
export const UnauthorizedError = errorClass('UnauthorizedError', 401, 'The request requires valid authorization token.');
export const ForbiddenError = errorClass('ForbiddenError', 403, 'You are not allowed to perform this request.');
export const NotFoundError = errorClass('NotFoundError', 404, "The requested resource wasn't found.");
export const TooManyRequestsError = errorClass('TooManyRequestsError', 429, 'Too Many Requests.');
export const InternalServerError = errorClass('InternalServerError', 500, 'Something went wrong while processing your request.');

/**
 * A field's problem in an error's data (`new BadRequestError("…", { title: new ValidationError("too_long", "…") })`):
 * Go's validation.Error, answered as `{code, message}`.
 */
export class ValidationError extends Error {
  private readonly c: string;
  private readonly m: string;
  constructor(code: any = '', message: any = '') {
    super(String(message));
    this.c = String(code);
    this.m = String(message);
    this.name = 'ValidationError';
  }
  code(): string {
    return this.c;
  }
  // Go's Error.Message(); the field `message` (a getter) is what JavaScript's Error has.
  error(): string {
    return this.m;
  }
  toJSON(): { code: string; message: string } {
    return { code: this.c, message: this.m };
  }
}

/** An error's data as it crosses to the host: plain JSON (a ValidationError as `{code, message}`). */
function plainData(data: any): any {
  try {
    return JSON.parse(JSON.stringify(data ?? {})) ?? {};
  } catch {
    return {};
  }
}

/** An error the host answered a call with, as an error thrown inside the handler. */
export function revive(e: any): Error {
  if (e.status) return new ApiError(e.status, e.message, e.data);
  return new Error(e.message);
}

/** A thrown value as the host reads it: an API error keeps its status (also Go-style `code`). */
export function serialize(err: any): any {
  if (err && typeof err === 'object' && typeof err.status === 'number' && err.status >= 400) return { status: err.status, message: String(err.message ?? ''), data: plainData(err.data) };
  if (err && typeof err === 'object' && typeof err.code === 'number' && err.code >= 400 && err.code < 600) return { status: err.code, message: String(err.message ?? ''), data: plainData(err.data) };
  return { message: err instanceof Error || (err && err.message) ? String(err.message) : String(err), stack: err && err.stack ? String(err.stack) : undefined };
}
