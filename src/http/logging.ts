import type { FastifyInstance, FastifyServerOptions } from 'fastify';

/** Query parameters whose values are credentials and must never reach a log. */
const SECRET_PARAMS = /([?&](?:token|code|codeVerifier|code_verifier|password|key|secret|state)=)[^&]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

/**
 * Structured logs (pino, one JSON line per event). Request lines carry method, redacted URL, status
 * and duration; headers are never logged, so tokens, API keys and cookies stay out.
 */
export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: ['req.headers', 'headers.authorization', 'password', '*.password', '*.passwordConfirm', '*.token'], remove: true },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
}

/** One line per finished request, instead of Fastify's two. */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      { method: req.method, url: redactUrl(req.url), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, ip: req.ip },
      'request',
    );
  });
}
