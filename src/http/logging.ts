import { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import pino from 'pino';

/** Query parameters whose values are credentials and must never reach a log. */
const SECRET_PARAMS = /([?&](?:token|code|codeVerifier|code_verifier|password|key|secret|state)=)[^&]*/gi;

export function redactUrl(url: string): string {
  // Most URLs have no query string: skip the regular expression for them.
  return url.includes('?') ? url.replace(SECRET_PARAMS, '$1[redacted]') : url;
}

const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 250;
let stdoutDestination: ReturnType<typeof pino.destination> | undefined;

/**
 * Standard output for log lines, shared by every app in the process (stdout is one file). Lines are
 * buffered and written a few kilobytes at a time, or at least every quarter second: a system call per
 * request line costs more than the rest of the logging. Writes stay synchronous (no thread-pool round
 * trip per batch), and what is left is written when the process exits.
 */
function logDestination(): ReturnType<typeof pino.destination> {
  if (!stdoutDestination) {
    const dest = pino.destination({ dest: 1, sync: true, minLength: LOG_BUFFER_BYTES });
    setInterval(() => dest.flush(), LOG_FLUSH_MS).unref();
    process.on('exit', () => dest.flushSync());
    stdoutDestination = dest;
  }
  return stdoutDestination;
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
      stream: level === 'silent' ? undefined : logDestination(),
      serializers: {
        req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
    // Fastify's own two lines per request are replaced by the single line of registerRequestLog.
    logController: new LogController({ disableRequestLogging: true }),
  };
}

/** One line per finished request, instead of Fastify's two. A callback hook: no promise per request. */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (req, reply, done) => {
    req.log.info(
      { method: req.method, url: redactUrl(req.url), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, ip: req.ip },
      'request',
    );
    done();
  });
}
