/**
 * The global names a pb_hooks file (or a migration) sees, as PocketBase's JSVM defines them, from
 * the runtime's parts. Constructors may be called without `new`, as goja lets Go's be.
 */
import { $dbx } from './dbx.ts';
import { ApiError, BadRequestError, ValidationError, ForbiddenError, InternalServerError, NotFoundError, TooManyRequestsError, UnauthorizedError } from './errors.ts';
import { Collection } from './collection.ts';
import { DateTime } from './datetime.ts';
import { $filepath } from './filepath.ts';
import { PbFormData } from './file.ts';
import { FIELD_CLASSES } from './schema.ts';
import { MailerMessage } from './mail.ts';
import { arrayOf, DynamicModel, nullables } from './models.ts';
import { toStringOf, type Realm } from './realm.ts';
import { $security } from './security.ts';
import { $template } from './template.ts';

/** Names wrapped so `Name(…)` works as `new Name(…)` (`throw ForbiddenError()`). */
const CALLABLE = ['Record', 'Collection', 'DynamicModel', 'DateTime', 'MailerMessage', 'RecordUpsertForm', 'ValidationError', 'Middleware', 'Cookie', 'SubscriptionMessage', 'FormData', 'ApiError', 'BadRequestError', 'NotFoundError', 'ForbiddenError', 'UnauthorizedError', 'TooManyRequestsError', 'InternalServerError'];

export interface GlobalParts {
  rt: Realm;
  hooksDir: string;
  Record: any;
  RecordUpsertForm: any;
  $app: any;
  $apis: any;
  $http: any;
  $os: any;
  $filesystem: any;
  $mails: any;
  console: any;
  /** routerAdd, routerUse, cronAdd, … (registrations.ts). */
  registration: Record<string, unknown>;
  /** More globals (field and model constructors, …), given last. */
  extra?: Record<string, unknown>;
}

export function pbGlobals(p: GlobalParts): Record<string, any> {
  const globals: Record<string, any> = {
    $app: p.$app,
    $apis: p.$apis,
    $security,
    $http: p.$http,
    $os: p.$os,
    $filepath,
    $template,
    $filesystem: p.$filesystem,
    $mails: p.$mails,
    $dbx,
    Record: p.Record,
    Collection,
    DynamicModel,
    DateTime,
    MailerMessage,
    RecordUpsertForm: p.RecordUpsertForm,
    Command: class {
      constructor(o: any = {}) {
        Object.assign(this, o);
      }
    },
    ValidationError,
    // routerAdd/routerUse middlewares with a priority (lower runs first) and an id, as PocketBase's.
    Middleware: class {
      constructor(func: any, priority: any = 0, id: any = '') {
        Object.assign(this, { func, priority: Number(priority) || 0, id: String(id ?? '') });
      }
    },
    // Go's http.Cookie, for `e.setCookie(new Cookie({ name, value, path, httpOnly, … }))`.
    Cookie: class {
      constructor(o: any = {}) {
        Object.assign(this, o);
      }
    },
    FormData: PbFormData,
    SubscriptionMessage: class {
      constructor(o: any = {}) {
        Object.assign(this, o);
      }
    },
    ApiError,
    BadRequestError,
    NotFoundError,
    ForbiddenError,
    UnauthorizedError,
    TooManyRequestsError,
    InternalServerError,
    arrayOf,
    ...nullables,
    __hooks: p.hooksDir,
    console: p.console,
    sleep: (ms: number) => Atomics.wait(p.rt.sleeper, 0, 0, Number(ms) || 0),
    toString: toStringOf,
    // PocketBase's toBytes: a string, bytes or a reader as the bytes Go would have (an array of numbers).
    toBytes: (v: any) => Array.from(typeof v?.__read === 'function' ? Buffer.from(v.__read()) : typeof v === 'string' ? Buffer.from(v) : v instanceof Uint8Array || Array.isArray(v) ? Buffer.from(v as any) : Buffer.from(toStringOf(v))),
    readerToString: (v: any) => String(v ?? ''),
    ...p.registration,
    migrate: () => undefined,
    setTimeout,
    clearTimeout,
    // goja_nodejs' `process`, which PocketBase enables: the environment.
    process: { env: { ...process.env }, argv: [], platform: process.platform },
    ...p.extra,
  };
  const callable = (C: any) => new Proxy(C, { apply: (target, _self, args) => new target(...args) });
  for (const name of [...CALLABLE, ...Object.keys(FIELD_CLASSES), 'SchemaField', 'Admin', 'Dao']) if (globals[name]) globals[name] = callable(globals[name]);
  return globals;
}
