import { isApiError } from '../errors.ts';

/**
 * What application code threw that is not one of the API's errors (`BadRequestError`, …): a fault,
 * answered with the generic 500. It keeps the original error and the hook file for the server log,
 * and stands between them and the error mapping, which would otherwise read a thrown library error's
 * own `statusCode` and message into the answer.
 */
export class HookFault extends Error {
  constructor(
    readonly source: string,
    override readonly cause: unknown,
  ) {
    super(`hook ${source} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'HookFault';
  }
}

/** `err` as it leaves a handler bound by `source`: API errors as they are, anything else a fault. */
export function asHookError(err: unknown, source: string): unknown {
  if (isApiError(err) || err instanceof HookFault) return err;
  return new HookFault(source, err);
}
