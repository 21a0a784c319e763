/**
 * Mail: `new MailerMessage({...})` (what `$app.newMailClient().send` takes) and `$mails`, PocketBase's
 * auth-flow mails to a record, sent now by the host (`app` is the first argument, as in PocketBase).
 */
import type { Realm } from './realm.ts';
import type { RecordClass } from './record.ts';

export class MailerMessage {
  constructor(m: any = {}) {
    Object.assign(this, m);
  }
}

export function mailsApi(rt: Realm, Record: RecordClass) {
  const call = rt.call;
  const recordOf = (args: any[]): any => {
    const r = args.find((a) => a instanceof Record);
    if (!r) throw new Error('$mails: a record is required');
    return r;
  };
  const $mails = {
    sendRecordPasswordReset: (...args: any[]) => void call('mails', 'password-reset', recordOf(args)._c.name, recordOf(args).id),
    sendRecordVerification: (...args: any[]) => void call('mails', 'verification', recordOf(args)._c.name, recordOf(args).id),
    sendRecordChangeEmail: (...args: any[]) => {
      const r = recordOf(args);
      void call('mails', 'email-change', r._c.name, r.id, String(args[args.indexOf(r) + 1] ?? ''));
    },
    // (app, record, otpId, password): the code mail of an OTP the hook made.
    sendRecordOTP: (...args: any[]) => {
      const r = recordOf(args);
      const i = args.indexOf(r);
      void call('mails', 'otp', r._c.name, r.id, String(args[i + 1] ?? ''), String(args[i + 2] ?? ''));
    },
    // (app, record, info): the new sign-in alert, `info` its {ALERT_INFO}.
    sendRecordAuthAlert: (...args: any[]) => {
      const r = recordOf(args);
      void call('mails', 'auth-alert', r._c.name, r.id, String(args[args.indexOf(r) + 1] ?? ''));
    },
  };
  
  return $mails;
}
