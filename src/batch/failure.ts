import { ApiError, badRequest, isApiError } from '../errors.ts';

/**
 * The answer to a batch one of whose requests failed, as PocketBase ≥ 0.23 gives it (API contract
 * §11): `400 Batch transaction failed.` naming the request by its index, `{code:
 * "batch_request_failed", message, response}` with the request's own error answer as `response`.
 * Nothing of the batch was written. A fault that is not an ApiError stays what it is (a 500, logged,
 * no details).
 */
export function batchFailed(index: number, err: unknown): unknown {
  if (!isApiError(err)) return err;
  return new ApiError(400, 'Batch transaction failed.', {
    requests: { [String(index)]: { code: 'batch_request_failed', message: 'Batch request failed.', response: err.toJSON() } },
  });
}

/** A batch that cannot be read as a list of requests at all. */
export function invalidBatch(message: string, code = 'validation_invalid_batch'): ApiError {
  return badRequest(message, { requests: { code, message } });
}
