/**
 * `$app.logger()` (slog's `debug/info/warn/error(msg, key, value, …)`) and `console.*`, both handed
 * to the host's log with the key/value pairs as data.
 */
import { plain, type Realm } from './realm.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

const logArgs = (msg: any, args: any[]): [string, Record<string, unknown>] => {
  const data: any = {};
  // An error (of any realm) as its message: as JSON it is `{}`.
  const value = (v: any) => (v && typeof v === 'object' && typeof v.message === 'string' && 'stack' in v ? String(v) : v);
  for (let i = 0; i + 1 < args.length; i += 2) data[String(args[i])] = value(args[i + 1]);
  return [String(msg), data];
};

export function loggerApi(rt: Realm) {
  const at =
    (level: Level) =>
    (m: any, ...a: any[]) => {
      const [msg, data] = plain(logArgs(m, a));
      rt.log(level, msg, data);
    };
  const logger: any = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), with: () => logger, withGroup: () => logger };
  /** console.log(a, b, …): every argument on one line, as goja's console prints them. */
  const consoleLine =
    (level: Level) =>
    (...args: any[]) =>
      logger[level](args.map((v) => (typeof v === 'string' ? v : v instanceof Error ? String(v) : (JSON.stringify(v) ?? String(v)))).join(' '));
  const console = { log: consoleLine('info'), info: consoleLine('info'), warn: consoleLine('warn'), error: consoleLine('error'), debug: consoleLine('debug') };
  return { logger, console };
}
