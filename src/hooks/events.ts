/**
 * The event objects hook handlers are given (API contract §16): record writes and their success,
 * sign-ins, auth flows, file downloads, reads, mail (with the conversion between Cairn's mail and
 * the message handlers edit) and realtime. HookRuntime (runtime.ts) builds and runs them.
 */
import type { Collection } from '../collections/model.ts';
import { type Auth, isSystem, type RequestContext } from '../context.ts';
import { RawAnswer } from '../records/deps.ts';
import type { RecordEvent as RecordChange, WriteEventInput } from '../records/deps.ts';
import type { RecordJson } from '../records/serialize.ts';
import type { FlowAction } from '../auth/flow-hook.ts';
import type { Mail, MailAbout } from '../auth/mail/mailer.ts';
import { hookApp, type ServiceSlot } from './facade.ts';
import type { RecordEventName } from './registry.ts';
import type { HookApp, HookAuth, HookCollection } from './types.ts';

export const WRITE_EVENTS: Record<RecordChange['action'], RecordEventName> = { create: 'onRecordCreate', update: 'onRecordUpdate', delete: 'onRecordDelete' };
export const SUCCESS_EVENTS: Record<RecordChange['action'], RecordEventName> = {
  create: 'onRecordAfterCreateSuccess',
  update: 'onRecordAfterUpdateSuccess',
  delete: 'onRecordAfterDeleteSuccess',
};

const collectionViews = new WeakMap<Collection, HookCollection>();

export function collectionView(c: Collection): HookCollection {
  let view = collectionViews.get(c);
  if (!view) collectionViews.set(c, (view = Object.freeze({ id: c.id, name: c.name, type: c.type })));
  return view;
}

/** The caller of a request as hooks see it: null for guests and for work no request started. */
export function hookAuth(ctx: RequestContext): HookAuth | null {
  if (isSystem(ctx)) return null;
  return authView(ctx.auth);
}

export function authView(auth: Auth): HookAuth | null {
  switch (auth.type) {
    case 'guest':
      return null;
    case 'admin':
      return { id: auth.id, email: auth.email, collectionId: 'pbc_3142635823', collectionName: '_superusers' };
    case 'apikey':
      return { id: auth.id, name: auth.name, roles: [...auth.roles], collectionName: '_api_keys' };
    case 'record':
      return { ...(auth.record as RecordJson), collectionId: auth.collectionId, collectionName: auth.collectionName } as HookAuth;
  }
}

/**
 * What every event handlers get has: `next`, the file of the handler running (`current`, set by the
 * chain) and `e.app`, made once per file on first use, its logger named after that file.
 */
abstract class HandlerEvent {
  next!: () => Promise<void>;
  current?: string;
  private apps?: Map<string, HookApp>;

  constructor(protected readonly slot: ServiceSlot) {}

  /** The transaction a write's handlers work in, when there is one. */
  protected appTx(): { db: string; tx: NonNullable<WriteEventInput['tx']> } | undefined {
    return undefined;
  }

  get app(): HookApp {
    const source = this.current ?? 'event';
    this.apps ??= new Map();
    let app = this.apps.get(source);
    if (!app) this.apps.set(source, (app = hookApp(this.slot, source, undefined, this.appTx())));
    return app;
  }
}

/**
 * The event objects handlers get. `app` and `auth` are made on first use: most handlers read
 * neither, and a write's cost is what the hooked-create bench holds to 5 %.
 */
export class Event extends HandlerEvent {
  private authMade?: HookAuth | null;

  constructor(
    slot: ServiceSlot,
    private readonly ctx: RequestContext,
    readonly collection: HookCollection,
    private readonly tx?: WriteEventInput['tx'],
  ) {
    super(slot);
  }

  get db(): string {
    return this.ctx.dbName;
  }

  protected override appTx() {
    return this.tx ? { db: this.ctx.dbName, tx: this.tx } : undefined;
  }

  get auth(): HookAuth | null {
    if (this.authMade === undefined) this.authMade = hookAuth(this.ctx);
    return this.authMade;
  }

  /** The request the write came from (`method` is `SYSTEM` for work no request started). */
  get request(): RequestContext['request'] {
    return this.ctx.request;
  }
}

/** An event about one record, held as given (enrich, after-success, sign-in). */
export class RecordHeld extends Event {
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: HookCollection,
    public record: Record<string, unknown>,
  ) {
    super(slot, ctx, collection);
  }
}

/** A write's event: `record` and `original` are made when a handler first reads them. */
export class WriteEvent extends Event {
  constructor(
    slot: ServiceSlot,
    private readonly input: WriteEventInput,
  ) {
    super(slot, input.ctx, collectionView(input.collection), input.tx);
  }

  get record(): Record<string, unknown> {
    return this.input.record.get();
  }

  set record(value: Record<string, unknown>) {
    this.input.record.set(value);
  }

  get original(): RecordJson | undefined {
    return this.input.original?.();
  }
}

/**
 * An after-success event. Its record is a copy of the committed one (which is also the write's
 * answer, not the handlers' to change), made when a handler first reads it.
 */
export class SuccessEvent extends Event {
  #committed: RecordJson;
  #record?: Record<string, unknown>;

  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    committed: RecordJson,
    readonly original: RecordJson | undefined,
  ) {
    super(slot, ctx, collectionView(collection));
    this.#committed = committed;
  }

  get record(): Record<string, unknown> {
    return (this.#record ??= { ...this.#committed });
  }

  set record(value: Record<string, unknown>) {
    this.#record = value;
  }
}

export class SignInEvent extends RecordHeld {
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    record: RecordJson,
    readonly token: string,
    readonly method: string,
  ) {
    super(slot, ctx, collectionView(collection), record);
  }
}

/** An email flow's request for an account (`onRecordAuthFlowRequest`); `method` names the action for pb_hooks' events. */
export class AuthFlowEvent extends RecordHeld {
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    record: RecordJson,
    readonly action: FlowAction,
    readonly newEmail: string | undefined,
  ) {
    super(slot, ctx, collectionView(collection), record);
  }

  get method(): string {
    return this.action;
  }
}

/** A record's file about to be downloaded (`onFileDownloadRequest`). */
export class FileDownloadEvent extends RecordHeld {
  readonly fileField: { name: string };
  readonly method = 'download';
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    record: RecordJson,
    field: string,
    public servedName: string,
  ) {
    super(slot, ctx, collectionView(collection), record);
    this.fileField = { name: field };
  }
}

/**
 * An API request reading records (`onRecordsListRequest`, `onRecordViewRequest`): `result` is the
 * list answer (its `items` also as `records`) or `record` the viewed one, both the handlers' to
 * change before `next()`; `answer` is set by a handler that answers itself.
 */
export class ReadRequestEvent extends Event {
  answer?: RawAnswer;
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    readonly kind: 'list' | 'view',
    public value: any,
  ) {
    super(slot, ctx, collectionView(collection));
  }

  get result(): any {
    return this.kind === 'list' ? this.value : undefined;
  }

  get records(): any[] {
    return this.kind === 'list' ? this.value.items : [this.value];
  }

  set records(items: any[]) {
    if (this.kind === 'list') this.value.items = items;
    else this.value = items[0];
  }

  get record(): any {
    return this.kind === 'view' ? this.value : this.value.items[0];
  }

  set record(r: any) {
    if (this.kind === 'view') this.value = r;
  }

  json(status: number, data: unknown): void {
    this.answer = new RawAnswer(status, 'application/json; charset=utf-8', JSON.stringify(data) ?? 'null');
  }

  string(status: number, text: string): void {
    this.answer = new RawAnswer(status, 'text/plain; charset=utf-8', String(text));
  }

  html(status: number, text: string): void {
    this.answer = new RawAnswer(status, 'text/html; charset=utf-8', String(text));
  }

  noContent(status = 204): void {
    this.answer = new RawAnswer(status, undefined, undefined);
  }
}

/** A mail address as PocketBase's `mail.Address`. */
export interface MailAddress {
  name: string;
  address: string;
}

/** A mail as hooks see it (PocketBase's `mailer.Message`). */
export interface HookMailMessage {
  from: MailAddress;
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
}

function parseAddresses(list: string | undefined): MailAddress[] {
  if (!list) return [];
  return list
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '')
    .map((a) => {
      const m = /^(.*)<([^>]+)>$/.exec(a);
      return m ? { name: m[1].trim().replace(/^"|"$/g, ''), address: m[2].trim() } : { name: '', address: a };
    });
}

function joinAddresses(list: unknown): string {
  const items = Array.isArray(list) ? list : list ? [list] : [];
  return items
    .map((a: any) => (typeof a === 'string' ? a : a?.name ? `${a.name} <${a.address}>` : String(a?.address ?? '')))
    .filter((a) => a !== '')
    .join(', ');
}

export function hookMessage(mail: Mail): HookMailMessage {
  return {
    from: { name: mail.from.name, address: mail.from.address },
    to: parseAddresses(mail.to),
    cc: parseAddresses(mail.cc),
    bcc: parseAddresses(mail.bcc),
    subject: mail.subject,
    html: mail.html,
    text: mail.text,
    headers: { ...(mail.headers ?? {}) },
  };
}

export function mailOfMessage(m: any): Mail {
  const from = m?.from && typeof m.from === 'object' ? { name: String(m.from.name ?? ''), address: String(m.from.address ?? '') } : parseAddresses(String(m?.from ?? ''))[0] ?? { name: '', address: '' };
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m?.headers ?? {})) headers[k] = String(v);
  return {
    from,
    to: joinAddresses(m?.to),
    cc: joinAddresses(m?.cc) || undefined,
    bcc: joinAddresses(m?.bcc) || undefined,
    subject: String(m?.subject ?? ''),
    html: String(m?.html ?? ''),
    text: String(m?.text ?? ''),
    headers,
  };
}

/** The hooks' event names of the auth flows' mails. */
export const MAIL_EVENTS: Record<MailAbout['event'], RecordEventName> = {
  'password-reset': 'onMailerRecordPasswordResetSend',
  verification: 'onMailerRecordVerificationSend',
  'email-change': 'onMailerRecordEmailChangeSend',
  otp: 'onMailerRecordOTPSend',
  'auth-alert': 'onMailerRecordAuthAlertSend',
};

/**
 * A mail about to leave (`onMailerSend`; `onMailerRecord*Send` with the account's `record`,
 * `collection` and `meta`): `message` is the handlers' to change; a handler that does not call
 * `next()` stops the mail.
 */
export class MailEvent extends HandlerEvent {
  readonly db = 'main';
  constructor(
    slot: ServiceSlot,
    public message: HookMailMessage,
    readonly collection?: { id: string; name: string; type: string },
    public record?: Record<string, unknown>,
    readonly meta?: Record<string, unknown>,
  ) {
    super(slot);
  }

  get auth(): null {
    return null;
  }
}

/**
 * A realtime event: a client connecting (`onRealtimeConnectRequest`), its subscription request
 * (`onRealtimeSubscribeRequest`, `subscriptions` the handlers' to change) or a message about to
 * reach it (`onRealtimeMessageSend`, `message` `{ name, data }` the handlers' to change).
 */
export class RealtimeEvent extends HandlerEvent {
  readonly db: string;
  subscriptions?: string[];
  message?: { name: string; data: string };
  constructor(
    slot: ServiceSlot,
    readonly client: { id: string },
    readonly request: RequestContext['request'] | undefined,
    readonly auth: HookAuth | null,
    db = 'main',
  ) {
    super(slot);
    this.db = db;
  }
}
