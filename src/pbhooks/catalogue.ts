/**
 * What PocketBase's hook registrations name, in Cairn's terms: the event a `pb_hooks` handler runs
 * on (and how its event is made), the registrations run once, cron macros and route paths.
 */
import type { RecordEventName } from '../hooks/registry.ts';

/**
 * Which Cairn event a PocketBase registration runs on, whether for API requests only, its API
 * generation, and how its event is made (`kind`: a write's, a record leaving, an API read, a mail, a
 * record an API request is about — a sign-in, an email flow's request, a download —, realtime).
 */
export type PbKind = 'write' | 'enrich' | 'read' | 'mail' | 'held' | 'realtime';
export const EVENTS: Record<string, { on: RecordEventName; api?: boolean; gen?: 22 | 23; kind?: PbKind; tags?: string[]; method?: string }> = {
  onRecordCreate: { on: 'onRecordCreate' },
  onRecordCreateExecute: { on: 'onRecordCreate' },
  onRecordValidate: { on: 'onRecordCreate' },
  onModelCreate: { on: 'onRecordCreate' },
  onModelBeforeCreate: { on: 'onRecordCreate', gen: 22 },
  onRecordCreateRequest: { on: 'onRecordCreate', api: true },
  onRecordBeforeCreateRequest: { on: 'onRecordCreate', api: true, gen: 22 },
  onRecordUpdate: { on: 'onRecordUpdate' },
  onRecordUpdateExecute: { on: 'onRecordUpdate' },
  onModelUpdate: { on: 'onRecordUpdate' },
  onModelBeforeUpdate: { on: 'onRecordUpdate', gen: 22 },
  onRecordUpdateRequest: { on: 'onRecordUpdate', api: true },
  onRecordBeforeUpdateRequest: { on: 'onRecordUpdate', api: true, gen: 22 },
  onRecordDelete: { on: 'onRecordDelete' },
  onRecordDeleteExecute: { on: 'onRecordDelete' },
  onModelDelete: { on: 'onRecordDelete' },
  onModelBeforeDelete: { on: 'onRecordDelete', gen: 22 },
  onRecordDeleteRequest: { on: 'onRecordDelete', api: true },
  onRecordBeforeDeleteRequest: { on: 'onRecordDelete', api: true, gen: 22 },
  onRecordAfterCreateSuccess: { on: 'onRecordAfterCreateSuccess' },
  onModelAfterCreateSuccess: { on: 'onRecordAfterCreateSuccess' },
  onModelAfterCreate: { on: 'onRecordAfterCreateSuccess', gen: 22 },
  onRecordAfterCreateRequest: { on: 'onRecordAfterCreateSuccess', api: true, gen: 22 },
  onRecordAfterUpdateSuccess: { on: 'onRecordAfterUpdateSuccess' },
  onModelAfterUpdateSuccess: { on: 'onRecordAfterUpdateSuccess' },
  onModelAfterUpdate: { on: 'onRecordAfterUpdateSuccess', gen: 22 },
  onRecordAfterUpdateRequest: { on: 'onRecordAfterUpdateSuccess', api: true, gen: 22 },
  onRecordAfterDeleteSuccess: { on: 'onRecordAfterDeleteSuccess' },
  onModelAfterDeleteSuccess: { on: 'onRecordAfterDeleteSuccess' },
  onModelAfterDelete: { on: 'onRecordAfterDeleteSuccess', gen: 22 },
  onRecordAfterDeleteRequest: { on: 'onRecordAfterDeleteSuccess', api: true, gen: 22 },
  onRecordEnrich: { on: 'onRecordEnrich', kind: 'enrich' },
  // The same names in both generations (v0.22's go on by themselves, without e.next()).
  onRecordsListRequest: { on: 'onRecordsListRequest', kind: 'read' },
  onRecordViewRequest: { on: 'onRecordViewRequest', kind: 'read' },
  onRecordAuthRequest: { on: 'onRecordAuthRequest', kind: 'held' },
  // The auth routes' own events fire as their sign-in succeeds (PocketBase fires them before it checks).
  onRecordAuthWithPasswordRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'password' },
  onRecordAuthWithOAuth2Request: { on: 'onRecordAuthRequest', kind: 'held', method: 'oauth2' },
  onRecordAuthWithOTPRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'otp' },
  onRecordAuthRefreshRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'refresh' },
  onRecordBeforeAuthWithPasswordRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'password', gen: 22 },
  onRecordBeforeAuthWithOAuth2Request: { on: 'onRecordAuthRequest', kind: 'held', method: 'oauth2', gen: 22 },
  onRecordBeforeAuthRefreshRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'refresh', gen: 22 },
  onAdminBeforeAuthWithPasswordRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'password', gen: 22, tags: ['_superusers'] },
  onAdminBeforeAuthRefreshRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'refresh', gen: 22, tags: ['_superusers'] },
  onFileDownloadRequest: { on: 'onFileDownloadRequest', kind: 'held' },
  // The email flows' requests, before their mail (the account found as e.record; not going on sends nothing).
  onRecordRequestVerificationRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-verification' },
  onRecordRequestPasswordResetRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-password-reset' },
  onRecordRequestEmailChangeRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-email-change' },
  onRecordRequestOTPRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-otp' },
  onRecordBeforeRequestVerificationRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-verification', gen: 22 },
  onRecordBeforeRequestPasswordResetRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-password-reset', gen: 22 },
  onRecordBeforeRequestEmailChangeRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-email-change', gen: 22 },
  // v0.22's superusers were admins, signing in apart.
  onAdminAuthRequest: { on: 'onRecordAuthRequest', kind: 'held', gen: 22, tags: ['_superusers'] },
  onMailerSend: { on: 'onMailerSend', kind: 'mail' },
  onMailerRecordPasswordResetSend: { on: 'onMailerRecordPasswordResetSend', kind: 'mail' },
  onMailerRecordVerificationSend: { on: 'onMailerRecordVerificationSend', kind: 'mail' },
  onMailerRecordEmailChangeSend: { on: 'onMailerRecordEmailChangeSend', kind: 'mail' },
  onMailerRecordOTPSend: { on: 'onMailerRecordOTPSend', kind: 'mail' },
  onMailerRecordAuthAlertSend: { on: 'onMailerRecordAuthAlertSend', kind: 'mail' },
  onMailerBeforeRecordResetPasswordSend: { on: 'onMailerRecordPasswordResetSend', kind: 'mail', gen: 22 },
  onMailerBeforeRecordVerificationSend: { on: 'onMailerRecordVerificationSend', kind: 'mail', gen: 22 },
  onMailerBeforeRecordChangeEmailSend: { on: 'onMailerRecordEmailChangeSend', kind: 'mail', gen: 22 },
  onRealtimeConnectRequest: { on: 'onRealtimeConnectRequest', kind: 'realtime' },
  onRealtimeSubscribeRequest: { on: 'onRealtimeSubscribeRequest', kind: 'realtime' },
  onRealtimeBeforeSubscribeRequest: { on: 'onRealtimeSubscribeRequest', kind: 'realtime', gen: 22 },
  onRealtimeMessageSend: { on: 'onRealtimeMessageSend', kind: 'realtime' },
  onRealtimeBeforeMessageSend: { on: 'onRealtimeMessageSend', kind: 'realtime', gen: 22 },
};

/** PocketBase's cron macros. */
export const CRON_MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** Registrations run once when the app serves. */
export const BOOTSTRAP = new Set(['onBootstrap', 'onAfterBootstrap', 'onBeforeBootstrap', 'onServe', 'onBeforeServe']);

/** `:name` (v0.22, echo) and `*` segments as Cairn's `{name}` and `{path...}`. */
export function pbRoutePath(p: string): string {
  return (p.startsWith('/') ? p : `/${p}`)
    .split('/')
    .map((s, i, all) => (s.startsWith(':') ? `{${s.slice(1)}}` : s === '*' && i === all.length - 1 ? '{path...}' : s))
    .join('/')
    .replace(/\{\$\}$/, '');
}
