/**
 * The interface application code sees (API contract §16): what a hook file's default export is
 * given, the events its handlers get, and the data access it may use. Self-contained on purpose:
 * this file and `index.ts` are the package's published types, so nothing internal leaks into them.
 */

/** A record as handlers see it: the API's record JSON, as an administrator sees it. */
export interface RecordData {
  id: string;
  collectionId: string;
  collectionName: string;
  created: string;
  updated: string;
  [field: string]: any;
}

/**
 * Records by collection name. Empty here; `cairn typegen` writes a declaration that fills it
 * (`declare module 'cairn' { interface CollectionRecords { posts: PostsRecord } }`), so that
 * `app.onRecordCreate((e) => e.record.title, 'posts')` is typed.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface CollectionRecords {}

/** A collection name: one typegen knows, or any other string. */
export type CollectionName = keyof CollectionRecords | (string & {});

/** The record type of a collection name (`RecordData` when typegen does not know it). */
export type RecordOf<C> = C extends keyof CollectionRecords ? CollectionRecords[C] & RecordData : RecordData;

/** The collection an event is about. */
export interface HookCollection {
  id: string;
  name: string;
  type: 'base' | 'auth' | 'view';
}

/** A superuser (a Cairn administrator). */
export interface SuperuserAuth {
  id: string;
  email: string;
  collectionId: 'pbc_3142635823';
  collectionName: '_superusers';
}

/** An API key (`roles` holding `admin` makes it privileged). */
export interface ApiKeyAuth {
  id: string;
  name: string;
  roles: string[];
  collectionName: '_api_keys';
}

/** Who made a request: `null` for a guest, else an auth record, a superuser or an API key. */
export type HookAuth = RecordData | SuperuserAuth | ApiKeyAuth;

/** Base of every event: `next()` runs the rest of the chain and, at its end, the work itself. */
export interface HookEvent {
  next(): Promise<void>;
}

/**
 * A record create, update or delete, inside the write's transaction. Before `next()`, `record`
 * holds the values to write (change them freely); after it, the stored record. `app` is bound to
 * the transaction: what a handler writes through it commits or rolls back with the record.
 */
export interface RecordEvent<R = RecordData> extends HookEvent {
  readonly app: HookApp;
  /** The database (`x-dbname`) the record is in. */
  readonly db: string;
  readonly collection: HookCollection;
  record: R;
  /** The record before an update. */
  readonly original?: R;
  /** Who asked for the write; `null` for a guest or for work no request started (cron, CLI). */
  readonly auth: HookAuth | null;
  /** The request the write came from: `method` is `SYSTEM` for work no request started (hooks' own writes, cron, CLI). */
  readonly request: HookRequestInfo;
}

/** The request behind a write. */
export interface HookRequestInfo {
  method: string;
  headers: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  ip: string;
}

/** After a committed create, update or delete (never for a rolled-back one). */
export interface RecordSuccessEvent<R = RecordData> extends HookEvent {
  readonly app: HookApp;
  readonly db: string;
  readonly collection: HookCollection;
  readonly record: R;
  readonly original?: R;
  readonly auth: HookAuth | null;
}

/** A record about to leave for a client: add, change or delete keys of `record`. */
export interface RecordEnrichEvent<R = RecordData> extends HookEvent {
  readonly app: HookApp;
  readonly db: string;
  readonly collection: HookCollection;
  record: R;
  /** The receiver. */
  readonly auth: HookAuth | null;
}

/** A successful sign-in, before its token is sent; throwing refuses it. */
export interface RecordAuthRequestEvent<R = RecordData> extends HookEvent {
  readonly app: HookApp;
  readonly db: string;
  readonly collection: HookCollection;
  readonly record: R;
  readonly token: string;
  /** `password`, `oauth2`, `otp`, `refresh`, … */
  readonly method: string;
}

/**
 * A request of an email flow for an account (`request-verification`, `request-password-reset`,
 * `request-email-change`, `request-otp`), before its mail is sent: throwing refuses the request, not calling
 * `next()` answers as usual and sends nothing.
 */
export interface RecordAuthFlowRequestEvent<R = RecordData> extends HookEvent {
  readonly app: HookApp;
  readonly db: string;
  readonly collection: HookCollection;
  /** The account the request is for. */
  readonly record: R;
  readonly action: 'request-verification' | 'request-password-reset' | 'request-email-change' | 'request-otp';
  /** The address asked for, in `request-email-change`. */
  readonly newEmail?: string;
}

/**
 * A record's file about to be downloaded (`GET /api/files/…`), once the caller may have it: change
 * `servedName` (the name the browser saves it under); throwing refuses the download with that
 * error; not calling `next()` answers 404 (the file is not there for this caller).
 */
export interface FileDownloadRequestEvent<R = RecordData> extends HookEvent {
  readonly app: HookApp;
  readonly db: string;
  readonly collection: HookCollection;
  readonly record: R;
  /** The file field holding the file. */
  readonly fileField: { name: string };
  servedName: string;
}

/**
 * An API request listing or viewing records (`onRecordsListRequest`, `onRecordViewRequest`), once
 * the records are read: change `result` (a list: `items`, `page`, `perPage`, `totalItems`,
 * `totalPages`) or `record` (a view) before `next()`, or answer yourself with `json`/`string`/`html`.
 */
export interface RecordReadRequestEvent<R = RecordData> extends HookEvent {
  readonly app: HookApp;
  readonly db: string;
  readonly collection: HookCollection;
  readonly auth: HookAuth | null;
  readonly request: HookRequestInfo;
  /** A list's answer (undefined for a view). */
  readonly result?: { items: R[]; page: number; perPage: number; totalItems: number; totalPages: number };
  /** A list's items, or the viewed record alone. */
  records: R[];
  /** The viewed record. */
  record: R;
  json(status: number, data: unknown): void;
  string(status: number, text: string): void;
  html(status: number, text: string): void;
  noContent(status?: number): void;
}

/** A mail address. */
export interface HookMailAddress {
  name: string;
  address: string;
}

/**
 * A mail about to leave (`onMailerSend`: every mail; `onMailerRecord…Send`: an auth flow's, with the
 * account's `record` and `meta` — the token, or an OTP's `otpId` and `password`). Change `message`
 * before `next()`; not calling it stops the mail.
 */
export interface MailerEvent extends HookEvent {
  readonly app: HookApp;
  message: { from: HookMailAddress; to: HookMailAddress[]; cc: HookMailAddress[]; bcc: HookMailAddress[]; subject: string; html: string; text: string; headers: Record<string, string> };
  readonly collection?: { id: string; name: string; type: string };
  readonly record?: RecordData;
  readonly meta?: Record<string, unknown>;
}

/** A request to a route added with `routerAdd`. */
export interface RouteEvent extends HookEvent {
  readonly app: HookApp;
  /** The database the request names (`x-dbname`, `main` by default), checked as for every route. */
  readonly db: string;
  readonly auth: HookAuth | null;
  readonly method: string;
  /** The path, without the query string. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly query: URLSearchParams;
  /** A `{name}` (or `{name...}`) segment of the route's path. */
  pathValue(name: string): string;
  /** The request body: JSON, or a form (url-encoded or multipart fields) as an object. */
  bindBody<T = any>(): Promise<T>;
  json(status: number, data: unknown): void;
  string(status: number, text: string): void;
  noContent(status?: number): void;
  redirect(status: number, url: string): void;
  html(status: number, html: string): void;
  /** Sets a header of the answer (several values: several lines). */
  header(name: string, value: string | string[]): void;
  /** The client's address. */
  readonly ip: string;
}

/** Raw SQL on one database's engine (SQLite or PostgreSQL: the SQL is the app's), `{:name}` placeholders bound from `params`. */
export interface HookDb {
  all<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  one<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T | undefined>;
  execute(sql: string, params?: Record<string, unknown>): Promise<void>;
}

/** Runs before a route's handler; `await e.next()` goes on, returning without it ends the request. */
export type RouteMiddleware = (e: RouteEvent) => unknown;

export interface FindOptions {
  /** A filter in the rule language, with `{:name}` placeholders bound from `params`. */
  filter?: string;
  /** `-created,title` */
  sort?: string;
  limit?: number;
  offset?: number;
  params?: Record<string, unknown>;
}

/**
 * Records of one database, without access rules. Writes are validated as API writes are and run the
 * record hooks; inside a record event they join its transaction.
 */
export interface RecordsApi {
  /** The record, or a `NotFoundError`. */
  findById<C extends CollectionName>(collection: C, id: string): Promise<RecordOf<C>>;
  /** The first record matching, or a `NotFoundError`. */
  findFirst<C extends CollectionName>(collection: C, filter: string, params?: Record<string, unknown>): Promise<RecordOf<C>>;
  find<C extends CollectionName>(collection: C, options?: FindOptions): Promise<RecordOf<C>[]>;
  count(collection: CollectionName, filter?: string, params?: Record<string, unknown>): Promise<number>;
  create<C extends CollectionName>(collection: C, data: Partial<RecordOf<C>> & Record<string, unknown>): Promise<RecordOf<C>>;
  update<C extends CollectionName>(collection: C, id: string, data: Partial<RecordOf<C>> & Record<string, unknown>): Promise<RecordOf<C>>;
  delete(collection: CollectionName, id: string): Promise<void>;
  /** Runs `fn` in one transaction of this database (joining the current one inside a record event). */
  transaction<T>(fn: (records: RecordsApi) => Promise<T>): Promise<T>;
}

export interface MailMessage {
  to: string | string[];
  subject: string;
  text?: string;
  html?: string;
}

export interface HookLogger {
  debug(msg: string, data?: Record<string, unknown>): void;
  info(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
  error(msg: string, data?: Record<string, unknown>): void;
}

type Handler<E> = (e: E) => unknown;

/** What a hook file's default export gets: registration, data and services. */
export interface HookApp {
  onRecordCreate<C extends CollectionName = string>(handler: Handler<RecordEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordUpdate<C extends CollectionName = string>(handler: Handler<RecordEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordDelete<C extends CollectionName = string>(handler: Handler<RecordEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordAfterCreateSuccess<C extends CollectionName = string>(handler: Handler<RecordSuccessEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordAfterUpdateSuccess<C extends CollectionName = string>(handler: Handler<RecordSuccessEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordAfterDeleteSuccess<C extends CollectionName = string>(handler: Handler<RecordSuccessEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordEnrich<C extends CollectionName = string>(handler: Handler<RecordEnrichEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordAuthRequest<C extends CollectionName = string>(handler: Handler<RecordAuthRequestEvent<RecordOf<C>>>, ...collections: C[]): void;
  onFileDownloadRequest<C extends CollectionName = string>(handler: Handler<FileDownloadRequestEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordAuthFlowRequest<C extends CollectionName = string>(handler: Handler<RecordAuthFlowRequestEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordsListRequest<C extends CollectionName = string>(handler: Handler<RecordReadRequestEvent<RecordOf<C>>>, ...collections: C[]): void;
  onRecordViewRequest<C extends CollectionName = string>(handler: Handler<RecordReadRequestEvent<RecordOf<C>>>, ...collections: C[]): void;
  onMailerSend(handler: Handler<MailerEvent>): void;
  onMailerRecordPasswordResetSend(handler: Handler<MailerEvent>, ...collections: CollectionName[]): void;
  onMailerRecordVerificationSend(handler: Handler<MailerEvent>, ...collections: CollectionName[]): void;
  onMailerRecordEmailChangeSend(handler: Handler<MailerEvent>, ...collections: CollectionName[]): void;
  onMailerRecordOTPSend(handler: Handler<MailerEvent>, ...collections: CollectionName[]): void;
  /** `path` as `/api/hello/{name}`, or `{rest...}` for the rest of the path. */
  routerAdd(method: string, path: string, handler: (e: RouteEvent) => unknown, ...middlewares: RouteMiddleware[]): void;
  /** A 5- or 6-field cron expression (UTC) or `@every 10m`; runs once per tick across nodes. */
  cronAdd(name: string, schedule: string, handler: () => unknown): void;
  cronRemove(name: string): void;
  /** Records of a database (`main` by default). */
  records(db?: string): RecordsApi;
  /** Raw SQL on a database (`main` by default); inside a record event, in the write's transaction. */
  db(db?: string): HookDb;
  /** The instance's settings (`meta`: appName, appUrl, senderName, senderAddress). */
  settings(): Promise<{ meta: { appName: string; appUrl: string; senderName: string; senderAddress: string } }>;
  readonly mail: { send(message: MailMessage): Promise<void> };
  /** The server's logger, named after the hook file. */
  readonly logger: HookLogger;
}

/** A hook file's default export. */
export type HookSetup = (app: HookApp) => void | Promise<void>;
