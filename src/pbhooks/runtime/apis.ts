/**
 * `$apis`: the route middlewares (`requireAuth`, `requireSuperuserAuth`, …, checked here by
 * `checkApis` before the handler), `$apis.static` (files served by the host) and the helpers
 * `requestInfo` and `recordAuthResponse`.
 */
import nodePath from 'node:path';
import { BadRequestError, ForbiddenError, UnauthorizedError } from './errors.ts';
import type { Realm } from './realm.ts';

export function staticHandler(dir: any, indexFallback: any) {
  const root = nodePath.resolve(typeof dir === 'string' ? dir : String(dir?.__dir ?? ''));
  return (c: any) => c.__static(root, !!indexFallback);
}

export function apisApi(rt: Realm) {
  const call = rt.call;
  const $apis = {
    requireAuth: (...collections: string[]) => ({ __apis: 'auth', collections }),
    requireRecordAuth: (...collections: string[]) => ({ __apis: 'record', collections }),
    requireSuperuserAuth: () => ({ __apis: 'superuser' }),
    requireAdminAuth: () => ({ __apis: 'superuser' }),
    requireAdminOrRecordAuth: (...collections: string[]) => ({ __apis: 'auth', collections }),
    requireSuperuserOrOwnerAuth: (param = 'id') => ({ __apis: 'owner', param }),
    requireAdminOrOwnerAuth: (param = 'id') => ({ __apis: 'owner', param }),
    requireGuestOnly: () => ({ __apis: 'guest' }),
    activityLogger: () => ({ __apis: 'none' }),
    skipSuccessActivityLog: () => ({ __apis: 'none' }),
    bodyLimit: () => ({ __apis: 'none' }),
    gzip: () => ({ __apis: 'none' }),
    requestInfo: (c: any) => c.requestInfo(),
    recordAuthResponse: (...args: any[]) => {
      const [, , record] = args.length >= 4 ? args : [null, ...args];
      const c = args.length >= 4 ? args[1] : args[0];
      const token = call('authToken', record._c.name, record.id);
      return c.json(200, { token, record: record.publicExport() });
    },
    enrichRecord: () => undefined,
    enrichRecords: () => undefined,
    // Files are served by the main thread: the handler only names the folder (no bytes cross here).
    static: (dir: any, indexFallback?: any) => staticHandler(dir, indexFallback),
    staticDirectoryHandler: (dir: any, indexFallback?: any) => staticHandler(dir, indexFallback),
  };
  return $apis;
}

/** Throws what PocketBase's middleware `mw` (a `$apis.require…()` marker) answers for the route event `ev`. */
export function checkApis(mw: any, ev: any) {
  const auth = ev.auth;
  const isSuper = !!auth && auth.collectionName === '_superusers';
  switch (mw.__apis) {
    case 'auth':
    case 'record':
      if (!auth || auth.collectionName === '_api_keys') throw new UnauthorizedError('The request requires valid record authorization token.');
      if (mw.__apis === 'record' && isSuper) throw new UnauthorizedError('The request requires valid record authorization token.');
      if (mw.collections?.length && !mw.collections.includes(auth.collectionName) && !(mw.__apis === 'auth' && isSuper && mw.collections.includes('_superusers'))) throw new ForbiddenError('The authorized record is not allowed to perform this action.');
      return;
    case 'superuser':
      if (!isSuper) throw new UnauthorizedError('The request requires valid superuser authorization token.');
      return;
    case 'owner':
      if (isSuper) return;
      if (!auth || auth.id !== ev.request.pathValue(mw.param)) throw new ForbiddenError('You are not allowed to perform this request.');
      return;
    case 'guest':
      if (auth) throw new BadRequestError('The request can be accessed only by guests.');
      return;
  }
}

