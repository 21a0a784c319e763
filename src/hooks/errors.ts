import { ApiError, type ErrorData } from '../errors.ts';

/**
 * Errors a hook or route throws to answer with API contract §3's body: the status, the message and
 * `data` as given. Anything else a hook throws is a fault: a bare 500, its detail only in the log.
 */

export class BadRequestError extends ApiError {
  constructor(message = 'Something went wrong while processing your request.', data: ErrorData = {}) {
    super(400, message, data);
    this.name = 'BadRequestError';
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'The request requires valid authorization token.', data: ErrorData = {}) {
    super(401, message, data);
    this.name = 'UnauthorizedError';
  }
}

export class ForbiddenError extends ApiError {
  constructor(message = 'You are not allowed to perform this request.', data: ErrorData = {}) {
    super(403, message, data);
    this.name = 'ForbiddenError';
  }
}

export class NotFoundError extends ApiError {
  constructor(message = "The requested resource wasn't found.", data: ErrorData = {}) {
    super(404, message, data);
    this.name = 'NotFoundError';
  }
}
