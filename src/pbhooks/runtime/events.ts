/**
 * Running one registered event handler: the event object it is given (`e.record`, `e.collection`,
 * `e.request`, `e.next()`, …) built from the host's payload, and what the host needs back (the
 * record's changes, whether `e.next()` ran, an answer). One function per family of events.
 */
import { Collection } from './collection.ts';
import { MailerMessage } from './mail.ts';
import { plain, toStringOf, type Realm } from './realm.ts';
import type { RecordClass } from './record.ts';
import type { Reg, Registrations } from './registrations.ts';

export interface EventParts {
  rt: Realm;
  Record: RecordClass;
  $app: any;
  dao: any;
  mailClient: any;
  registry: Registrations;
  requestOf(req: any): any;
  authRecord(auth: any): any;
  routeContext(req: any, out: any): any;
}

export function eventsApi(p: EventParts) {
  const { rt, Record, $app, dao, mailClient, requestOf, authRecord, routeContext } = p;
  const { call, inner } = rt;
  const { regs, deferrable } = p.registry;
  function runEvent(reg: Reg, fn: any, payload: any) {
    const collection = new Collection(payload.collection);
    const record = payload.record ? Record.__from(payload.record, collection) : null;
    if (record && payload.original) record._o = { ...payload.original };
    if (record && payload.isNew) record._o = null;
    const req = payload.request ? requestOf(payload.request) : null;
    let nextCalled = false;
    /** The changes an `e.next()` left for the main thread to write (deferredNext). */
    let deferred: { [key: string]: unknown } | null = null;
    const auth = payload.auth ? authRecord(payload.auth) : null;
    const e: any = {
      app: $app,
      dao: () => dao,
      collection,
      record,
      auth,
      httpContext: req ? routeContext(payload.request, { answer: null, headers: {} }) : undefined,
      requestInfo: req ? req.info : () => inner({ body: {}, query: {}, headers: {}, method: '' }),
      request: req ? Object.assign(() => req.request, req.request) : undefined,
      uploadedFiles: {},
      files: {},
      next: () => {
        if (nextCalled) throw new Error('e.next() was already called');
        nextCalled = true;
        const changes = record ? record.__changes() : {};
        const now = () => {
          const stored = call('next', changes);
          if (record && stored) record.__refresh(stored);
        };
        if (!deferrable[regs.indexOf(reg)]) return now();
        deferred = changes;
        rt.deferredNext = () => {
          deferred = null;
          now();
        };
      },
      hasSuperuserAuth: () => !!auth?.isSuperuser(),
      isSuperuser: () => !!auth?.isSuperuser(),
      realIP: () => payload.request?.ip ?? '',
      remoteIP: () => payload.request?.ip ?? '',
      // onTerminate's.
      isRestart: payload.isRestart === true,
    };
    if (payload.original) e.original = Record.__from(payload.original, collection);
    // v0.22's onModel* events name the record `e.model`.
    e.model = record;
    fn(e);
    if (deferred) {
      rt.deferredNext = null;
      return { nextCalled, changes: deferred, deferredNext: true };
    }
    return { nextCalled, changes: record ? record.__changes() : {} };
  }
  
  /** The parts of an event about a request (`e.request`, `e.requestInfo()`, `e.auth`, …). */
  function requestParts(payload: any) {
    const req = payload.request ? requestOf(payload.request) : null;
    const auth = payload.auth ? authRecord(payload.auth) : null;
    return {
      app: $app,
      dao: () => dao,
      auth,
      httpContext: req ? routeContext(payload.request, { answer: null, headers: {} }) : undefined,
      requestInfo: req ? req.info : () => inner({ body: {}, query: {}, headers: {}, method: '' }),
      request: req ? Object.assign(() => req.request, req.request) : undefined,
      hasSuperuserAuth: () => !!auth?.isSuperuser(),
      isSuperuser: () => !!auth?.isSuperuser(),
      realIP: () => payload.request?.ip ?? '',
      remoteIP: () => payload.request?.ip ?? '',
    };
  }
  
  /** A record leaving for a client (onRecordEnrich) or a sign-in (onRecordAuthRequest). */
  function runHeld(reg: Reg, fn: any, payload: any) {
    const collection = new Collection(payload.collection);
    const record = payload.record ? Record.__from(payload.record, collection) : null;
    let nextCalled = false;
    const e: any = {
      ...requestParts(payload),
      collection,
      record,
      token: payload.token,
      authMethod: payload.method,
      meta: {},
      // The sign-in's own request (onRecordAuthWithPasswordRequest…): what the client sent.
      identity: payload.request?.body?.identity ?? '',
      identityField: 'email',
      password: payload.request?.body?.password ?? '',
      providerName: payload.request?.body?.provider ?? '',
      // An email change request's new address (onRecordRequestEmailChangeRequest).
      newEmail: payload.newEmail ?? '',
      // A file download's (onFileDownloadRequest): the name it is sent under is the handler's to change.
      fileField: payload.fileField ? inner(payload.fileField) : undefined,
      servedName: payload.servedName ?? '',
      servedPath: payload.servedName ?? '',
      next: () => {
        if (nextCalled) throw new Error('e.next() was already called');
        nextCalled = true;
        call('next', { ...(record ? record.__delta() : {}), servedName: String(e.servedName ?? '') });
      },
    };
    fn(e);
    return { nextCalled, delta: record ? record.__delta() : {}, servedName: String(e.servedName ?? '') };
  }
  
  /** An API request listing or viewing records (onRecordsListRequest, onRecordViewRequest). */
  function runRead(reg: Reg, fn: any, payload: any) {
    const collection = new Collection(payload.collection);
    const out: any = { answer: null, headers: {} };
    const c = payload.request ? routeContext(payload.request, out) : {};
    const records = (payload.records ?? []).map((r: any) => Record.__from(r, collection));
    const result = payload.result ? { ...payload.result, items: records } : undefined;
    let nextCalled = false;
    const exported = (): any[] => (e.record && payload.view ? [e.record] : (e.result?.items ?? e.records ?? [])).map((r: any) => (r instanceof Record ? r.publicExport() : r));
    const e: any = {
      ...c,
      ...requestParts(payload),
      collection,
      records,
      record: payload.view ? records[0] : undefined,
      result,
      next: () => {
        if (nextCalled) throw new Error('e.next() was already called');
        nextCalled = true;
        call('next', { records: exported(), result: meta() });
      },
    };
    /** The list's totals and paging as the handler left them. */
    const meta = () => {
      if (!e.result || typeof e.result !== 'object') return undefined;
      const { items: _items, ...rest } = e.result;
      return plain(rest);
    };
    fn(e);
    return { nextCalled, answer: out.answer, headers: out.headers, records: nextCalled || out.answer ? undefined : exported(), result: nextCalled || out.answer ? undefined : meta() };
  }
  
  /** Realtime: a client connecting, its subscription request, a message about to reach it. */
  function runRealtime(reg: Reg, fn: any, payload: any) {
    const id = String(payload.client?.id ?? '');
    const store: any = {};
    const e: any = {
      ...requestParts(payload),
      // PocketBase's subscriptions.Client, whose methods goja lowers: client.id(), client.subscriptions()…
      client: {
        id: () => id,
        get: (k: string) => store[k],
        set: (k: string, v: any) => (store[k] = v),
        subscriptions: () => Object.fromEntries((e.subscriptions ?? []).map((t: string) => [t, {}])),
        hasSubscription: (t: string) => (e.subscriptions ?? []).includes(t),
        isDiscarded: () => false,
      },
      subscriptions: payload.subscriptions ? inner(payload.subscriptions) : undefined,
      message: payload.message ? inner(payload.message) : undefined,
      idleTimeout: 300,
    };
    let nextCalled = false;
    const out = () => ({ subscriptions: e.subscriptions ? plain(e.subscriptions) : undefined, message: e.message ? { name: String(e.message.name ?? ''), data: typeof e.message.data === 'string' ? e.message.data : toStringOf(e.message.data) } : undefined });
    e.next = () => {
      if (nextCalled) throw new Error('e.next() was already called');
      nextCalled = true;
      call('next', out());
    };
    fn(e);
    return { nextCalled, ...out() };
  }
  
  /** A mail about to leave (onMailerSend, onMailerRecord*Send, v0.22's onMailerBefore*Send). */
  function runMail(reg: Reg, fn: any, payload: any) {
    const collection = payload.collection ? new Collection(payload.collection) : null;
    const message = new MailerMessage(payload.message ?? {});
    let nextCalled = false;
    const e: any = {
      app: $app,
      dao: () => dao,
      mailer: mailClient,
      mailClient,
      message,
      collection,
      record: payload.record ? Record.__from(payload.record, collection ?? undefined) : null,
      meta: inner(payload.meta ?? {}),
      next: () => {
        if (nextCalled) throw new Error('e.next() was already called');
        nextCalled = true;
        call('next', plain(e.message));
      },
    };
    fn(e);
    return { nextCalled, message: plain(e.message) };
  }
  return { runEvent, runHeld, runRead, runRealtime, runMail };
}
