import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, badRequest, internal, isApiError, notFound, tooLarge, unsupportedMediaType } from '../../errors.ts';
import { FilterError } from '../../rules/errors.ts';
import { HookFault } from '../../hooks/fault.ts';

/** Maps what Fastify itself rejects (body parsing, limits) onto Cairn's error shape. */
function fromFastify(err: FastifyError): ApiError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType('Unsupported Content-Type: send application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('Failed to load the submitted data due to invalid formatting.');
  }
  if (err.validation) {
    const data: Record<string, { code: string; message: string }> = {};
    for (const v of err.validation) {
      const key = (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.') || String((v.params as { missingProperty?: string })?.missingProperty ?? 'body');
      data[key] = { code: 'validation_invalid_value', message: v.message ?? 'Invalid value.' };
    }
    return badRequest('Failed to validate the submitted data.', data);
  }
  // Body parser errors (malformed JSON, prototype poisoning) carry a 400 status and no code we map.
  if (err instanceof SyntaxError || (err.statusCode === 400 && !err.code?.startsWith('FST_ERR_'))) {
    return badRequest('Failed to load the submitted data due to invalid formatting.');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError(err.statusCode, err.message);
  }
  return undefined;
}

/**
 * Errors Fastify's router raises before any route or error handler runs (a malformed URL, a path
 * segment longer than any name or id): Fastify's option `frameworkErrors`, so they too leave in the
 * error shape. A segment too long to be a name or an id names nothing: 404.
 */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const apiError = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? notFound() : badRequest('Malformed URL.');
  reply.errorMessage = apiError.message;
  void reply.status(apiError.status).send(apiError.toJSON());
}

/**
 * Requests Node's HTTP parser refuses (headers over its limit, bytes that are not HTTP): Fastify's
 * option `clientErrorHandler`, answering on the socket in the error shape instead of Fastify's own.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message = status === 431 ? 'Request headers too large.' : status === 408 ? 'Request timeout.' : 'Malformed HTTP request.';
  const body = JSON.stringify(new ApiError(status, message).toJSON());
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/** Every error leaves as `{data, message, status, code}`; 5xx details stay in the log. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    let apiError: ApiError | undefined;
    if (err instanceof HookFault) {
      // Application code failed: its error and file go to the log, never into the answer.
      req.log.error({ err: err.cause, hook: err.source }, 'hook failed');
      apiError = internal();
    } else {
      if (isApiError(err)) apiError = err;
      else if (err instanceof FilterError) apiError = badRequest(`Invalid expression: ${err.describe()}.`);
      else apiError = fromFastify(err);
      if (!apiError) {
        req.log.error({ err }, 'unhandled error');
        apiError = internal();
      } else if (apiError.status >= 500) {
        req.log.error({ err }, 'server error');
      }
    }
    if (apiError.headers) reply.headers(apiError.headers);
    reply.errorMessage = apiError.message;
    return reply.status(apiError.status).send(apiError.toJSON());
  });

  app.setNotFoundHandler((_req, reply) => {
    const err = notFound();
    reply.errorMessage = err.message;
    return reply.status(404).send(err.toJSON());
  });
}
