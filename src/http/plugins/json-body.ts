import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../errors.ts';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../../lib/json-depth.ts';
import { holdsLoneSurrogate } from '../../lib/well-formed.ts';

/**
 * JSON bodies, with an empty one read as no body: PocketBase's SDKs send bodiless POSTs (auth-refresh,
 * files/token) with `Content-Type: application/json`, which PocketBase accepts. Everything else is
 * Fastify's own parser, with its prototype-poisoning checks and the body limit, after a check of the
 * nesting depth.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') {
      done(null, undefined);
      return;
    }
    if (jsonTooDeep(body as string)) {
      done(badRequest(`Failed to load the submitted data: JSON nested deeper than ${MAX_JSON_DEPTH} levels.`), undefined);
      return;
    }
    // A lone surrogate can only come from a `\u` escape: texts without one are not walked.
    if (!(body as string).includes('\\u')) return parse(req, body as string, done);
    parse(req, body as string, (err: Error | null, value?: unknown) => {
      if (!err && holdsLoneSurrogate(value)) done(badRequest('Failed to load the submitted data: a string holds half of a UTF-16 surrogate pair.'), undefined);
      else done(err, value);
    });
  });
}
