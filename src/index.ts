/**
 * The `cairn` package: what application code imports (API contract §16). Hook files
 * (`export default defineHooks((app) => { … })`), their errors and route middlewares, and
 * `createCairn` to run Cairn in-process.
 */
import type { HookSetup } from './hooks/types.ts';

export { ApiError } from './errors.ts';
export { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from './hooks/errors.ts';
export { requireAuth, requireSuperuser } from './hooks/middlewares.ts';
export { type Cairn, type CairnOptions, createCairn } from './library.ts';
export type {
  ApiKeyAuth,
  CollectionName,
  CollectionRecords,
  FindOptions,
  HookApp,
  HookAuth,
  HookCollection,
  HookDb,
  HookEvent,
  HookLogger,
  HookRequestInfo,
  HookSetup,
  MailMessage,
  RecordAuthRequestEvent,
  RecordReadRequestEvent,
  MailerEvent,
  HookMailAddress,
  RecordData,
  RecordEnrichEvent,
  RecordEvent,
  RecordOf,
  RecordSuccessEvent,
  RecordsApi,
  RouteEvent,
  RouteMiddleware,
  SuperuserAuth,
} from './hooks/types.ts';

/** Types a hook file's default export: `export default defineHooks((app) => { … })`. */
export function defineHooks(setup: HookSetup): HookSetup {
  return setup;
}
