import { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify';
import { STATUS_CODES } from 'node:http';
import pino from 'pino';
import type { Auth } from '../context.ts';
import type { CallerKind } from '../logs/entry.ts';
import type { RequestLogs } from '../logs/service.ts';

declare module 'fastify' {
  interface FastifyReply {
    /** The message of the error this reply answers with, for the request log (set by the error handlers). */
    errorMessage: string;
  }
}

/**
 * Query parameters whose values are credentials and must never reach a log: any name holding one of
 * these words (`token`, `access_token`, `codeVerifier`, `api_key`, `passwordConfirm`, …). Redacting a
 * harmless parameter now and then costs nothing; missing a credential would.
 */
const SECRET_PARAMS = /([?&][^=&#]*(?:token|code|verifier|password|key|secret|state|signature|credential)[^=&#]*=)[^&#]*/gi;

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
 * A logger writing where the server's does, for what logs before the app exists (hooks loading).
 */
export function processLogger(level: string): pino.Logger {
  return pino({ level }, level === 'silent' ? undefined : logDestination());
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

const CALLER_KINDS: Record<Auth['type'], CallerKind> = { guest: 'guest', admin: 'admin', record: 'authRecord', apikey: 'apikey' };

function header(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** The request log's entry for a finished request (API contract §15); secrets stay out as in the line. */
function requestLogEntry(req: FastifyRequest, reply: FastifyReply, url: string, ms: number) {
  // No context when the request was refused while it was built (a bad token, an unknown database).
  const ctx = req.ctx as FastifyRequest['ctx'] | null;
  const auth = ctx?.auth;
  const status = reply.statusCode;
  return {
    time: Date.now(),
    method: req.method,
    url,
    status,
    execTime: ms,
    auth: auth ? CALLER_KINDS[auth.type] : 'guest',
    authId: auth && auth.type !== 'guest' ? auth.id : '',
    database: ctx?.db ? ctx.dbName : '',
    userIp: req.ip ?? '',
    remoteIp: req.socket?.remoteAddress ?? '',
    userAgent: header(req.headers['user-agent']).slice(0, 512),
    referer: redactUrl(header(req.headers.referer)).slice(0, 2048),
    error: status >= 400 ? reply.errorMessage || STATUS_CODES[status] || '' : '',
  } as const;
}

/**
 * One line per finished request, instead of Fastify's two, and (with `requestLogs`) an entry of the
 * request log for every API request. A request the request log records gets its line at `debug`
 * only: the log already holds it, with more, and a JSON line per request on stdout cost a fast
 * request some 5 % of its CPU. Other requests (the dashboard's files, and every request when the
 * request log is off) are logged at `info`. A callback hook: no promise per request; the entry is
 * only queued here, written in batches by the log's writer.
 */
export function registerRequestLog(app: FastifyInstance, requestLogs?: RequestLogs, warming?: { active: boolean }): void {
  app.decorateReply('errorMessage', '');
  app.addHook('onResponse', (req, reply, done) => {
    // The start's own warm-up requests (warm-up.ts) are nobody's.
    if (warming?.active) return done();
    const url = redactUrl(req.url);
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    // Whether the log records is the `logs` settings' say, which may change at any request.
    const record = requestLogs?.enabled ? requestLogs : undefined;
    const recorded = record !== undefined && url.startsWith('/api/');
    if (recorded) {
      // The fields are built only when the line is written.
      if (req.log.level === 'debug' || req.log.level === 'trace') req.log.debug({ method: req.method, url, statusCode: reply.statusCode, ms, ip: req.ip }, 'request');
      record.record(requestLogEntry(req, reply, url, ms));
    } else {
      req.log.info({ method: req.method, url, statusCode: reply.statusCode, ms, ip: req.ip }, 'request');
    }
    done();
  });
}
