import { ApiError, badRequest, isApiError } from '../errors.ts';

/**
 * The answer to a batch one of whose requests failed (API contract §11): a 400 naming the request by
 * its index, with that request's own error `{code, message, data}`, and the same error again under
 * `response`, where PocketBase ≥ 0.23 puts it (its `code` there is `batch_request_failed`; the
 * contract's `code` is the request's status). Nothing of the batch was written.
 * A fault that is not an ApiError stays what it is (a 500, logged, no details).
 */
export function batchFailed(index: number, err: unknown): unknown {
  if (!isApiError(err)) return err;
  const error = err.toJSON();
  return new ApiError(400, 'Batch transaction failed.', { requests: { [String(index)]: { ...error, response: error } } });
}

/** A batch that cannot be read as a list of requests at all. */
export function invalidBatch(message: string, code = 'validation_invalid_batch'): ApiError {
  return badRequest(message, { requests: { code, message } });
}
