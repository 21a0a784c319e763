import type { NamingLogger as Logger } from '../lib/logger.ts';
import type { Mailer } from '../auth/mail/mailer.ts';
import type { AuthAlerts } from '../auth/auth-alert.ts';
import type { EmailFlows } from '../auth/email-flows.ts';
import type { OtpService } from '../auth/otp.ts';
import type { RealtimeService } from '../realtime/service.ts';
import type { SettingsService } from '../settings/service.ts';
import type { MetaSettings } from '../settings/meta.ts';
import { HookRecords, type HookData, type OpenTransaction } from './records-api.ts';
import type { HookSet, RecordEventName } from './registry.ts';
import type { HookApp, HookLogger, MailMessage, RouteMiddleware } from './types.ts';

/** The services of the app serving now, which hooks reach through `app` (a restore replaces them). */
export interface HookServices extends HookData {
  mailer: Mailer;
  /** The auth flows' mails (pb_hooks' `$mails.sendRecord…`). */
  emailFlows?: EmailFlows;
  /** The OTP and sign-in alert mails (`$mails.sendRecordOTP`, `$mails.sendRecordAuthAlert`). */
  otp?: Pick<OtpService, 'mailCode'>;
  authAlerts?: Pick<AuthAlerts, 'mail'>;
  /** This node's realtime clients (`$app.subscriptionsBroker()`). */
  realtime?: Pick<RealtimeService, 'brokerClients' | 'sendTo' | 'discard'>;
  settings: SettingsService;
  log: Logger;
}

/** Where the facade finds the services: set once the app is built, cleared when it closes. */
export interface ServiceSlot {
  current?: HookServices;
  /** The log before the app is built (while the hooks load). */
  log?: Logger;
}

function servicesOf(slot: ServiceSlot): HookServices {
  if (!slot.current) throw new Error('Cairn is not serving: hooks reach records, mail and logs only while the server runs');
  return slot.current;
}

function hookLogger(slot: ServiceSlot, source: string): HookLogger {
  const child = () => {
    const log = slot.current?.log ?? slot.log;
    if (!log) throw new Error('Cairn has no log yet');
    return log.child({ hook: source });
  };
  return {
    debug: (msg, data) => child().debug(data ?? {}, msg),
    info: (msg, data) => child().info(data ?? {}, msg),
    warn: (msg, data) => child().warn(data ?? {}, msg),
    error: (msg, data) => child().error(data ?? {}, msg),
  };
}

async function sendMail(slot: ServiceSlot, message: MailMessage): Promise<void> {
  const { mailer, settings } = servicesOf(slot);
  if (typeof message !== 'object' || message === null) throw new TypeError('mail.send takes {to, subject, text, html}');
  const to = Array.isArray(message.to) ? message.to.join(', ') : message.to;
  if (typeof to !== 'string' || to.trim() === '') throw new TypeError('mail.send: `to` is required');
  if (typeof message.subject !== 'string') throw new TypeError('mail.send: `subject` is required');
  const meta = await settings.get<MetaSettings>('meta');
  await mailer.send({ from: { name: meta.senderName, address: meta.senderAddress }, to, subject: message.subject, text: message.text ?? '', html: message.html ?? '' });
}

function refuse(what: string): never {
  throw new Error(`${what}: hooks are registered while their file loads, not from inside a handler`);
}

/**
 * The `app` a hook file's default export gets (registering into `set`, as `source`), or, without a
 * set, the `e.app` of an event: the same data and services, with `records` joining `open`, the
 * transaction of the write under way.
 */
export function hookApp(slot: ServiceSlot, source: string, set?: HookSet, open?: OpenTransaction): HookApp {
  const on =
    (event: RecordEventName) =>
    (handler: (e: any) => unknown, ...collections: string[]) =>
      set ? set.bind(event, handler, collections, source) : refuse(event);
  const data = () => servicesOf(slot);
  return {
    onRecordCreate: on('onRecordCreate'),
    onRecordUpdate: on('onRecordUpdate'),
    onRecordDelete: on('onRecordDelete'),
    onRecordAfterCreateSuccess: on('onRecordAfterCreateSuccess'),
    onRecordAfterUpdateSuccess: on('onRecordAfterUpdateSuccess'),
    onRecordAfterDeleteSuccess: on('onRecordAfterDeleteSuccess'),
    onRecordEnrich: on('onRecordEnrich'),
    onRecordAuthRequest: on('onRecordAuthRequest'),
    onRecordAuthFlowRequest: on('onRecordAuthFlowRequest'),
    onFileDownloadRequest: on('onFileDownloadRequest'),
    onRecordsListRequest: on('onRecordsListRequest'),
    onRecordViewRequest: on('onRecordViewRequest'),
    onMailerSend: on('onMailerSend'),
    onMailerRecordPasswordResetSend: on('onMailerRecordPasswordResetSend'),
    onMailerRecordVerificationSend: on('onMailerRecordVerificationSend'),
    onMailerRecordEmailChangeSend: on('onMailerRecordEmailChangeSend'),
    onMailerRecordOTPSend: on('onMailerRecordOTPSend'),
    routerAdd(method: string, path: string, handler: (e: any) => unknown, ...middlewares: RouteMiddleware[]) {
      if (!set) refuse('routerAdd');
      set.addRoute(method, path, handler, middlewares, source);
    },
    cronAdd(name: string, schedule: string, handler: () => unknown) {
      if (!set) refuse('cronAdd');
      set.addCron(name, schedule, handler, source);
    },
    cronRemove(name: string) {
      if (!set) refuse('cronRemove');
      set.crons.delete(name);
    },
    records: (db = 'main') => new HookRecords(data, db, open),
    db: (db = 'main') => {
      const records = new HookRecords(data, db, open);
      return {
        all: async (text, params = {}) => (await records.sql(text, params, 'all')) as any[],
        one: async (text, params = {}) => ((await records.sql(text, params, 'one')) as any[])[0],
        execute: async (text, params = {}) => void (await records.sql(text, params, 'execute')),
      };
    },
    settings: async () => {
      const meta = await servicesOf(slot).settings.get<MetaSettings>('meta');
      return { meta: { appName: meta.appName, appUrl: meta.appUrl, senderName: meta.senderName, senderAddress: meta.senderAddress } };
    },
    mail: { send: (message: MailMessage) => sendMail(slot, message) },
    logger: hookLogger(slot, source),
  };
}
