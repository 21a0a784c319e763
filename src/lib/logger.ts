/** The part of a structured logger (pino, Fastify's `app.log`) that background work writes to. */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** A logger that names its lines (`child`), as pino's and Fastify's do: what hooks log through. */
export interface NamingLogger extends Logger {
  debug(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): NamingLogger;
}
