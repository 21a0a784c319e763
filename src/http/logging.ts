import { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';

/** Query parameters whose values are credentials and must never reach a log. */
const SECRET_PARAMS = /([?&](?:token|code|codeVerifier|code_verifier|password|key|secret|state)=)[^&]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

/**
 * Structured logs (pino, one JSON line per event). Secrets stay out because nothing logs a header or
 * a body: request lines are built from named fields (method, redacted URL, status, duration, address)
 * and the serializers below reduce Fastify's `req`/`res` to the same. No pino `redact` pass: it would
 * walk every log line on the hot path to remove what is never put there.
 */
export function loggerOptions(level: string): Pick<FastifyServerOptions, 'logger' | 'logController'> {
  return {
    logger: {
      level,
      serializers: {
        req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
    // Fastify's own two lines per request are replaced by the single line of registerRequestLog.
    logController: new LogController({ disableRequestLogging: true }),
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
