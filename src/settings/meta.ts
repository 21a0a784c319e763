import { isEmail } from '../collections/fields/email.ts';
import type { FieldError } from '../errors.ts';
import { httpUrl, objectInput, type SettingsSection } from './service.ts';

/** PocketBase's `meta` settings: how the instance names itself in mails and where its app lives. */
export interface MetaSettings {
  appName: string;
  /** Base address of the client app; links in mails point there. */
  appUrl: string;
  senderName: string;
  senderAddress: string;
}

/**
 * The app URL until one is saved: the address the server listens on, as a browser reaches it. A
 * wildcard host (`::`, `0.0.0.0`) is `localhost` (PocketBase's default is `http://localhost:8090`),
 * and an IPv6 address is bracketed, so mail links are never `http://:::8090/…`.
 */
export function defaultAppUrl(host: string, port: number): string {
  const name = host === '' || host === '::' || host === '0.0.0.0' || host === '[::]' ? 'localhost' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

export function metaSection(defaultAppUrl: string): SettingsSection<MetaSettings> {
  return {
    name: 'meta',
    defaults: () => ({ appName: 'Cairn', appUrl: defaultAppUrl, senderName: 'Cairn', senderAddress: 'no-reply@cairn.local' }),
    merge(input, current, errors) {
      const obj = objectInput(input, 'meta', errors);
      if (!obj) return current;
      const next = { ...current };
      const text = (key: 'appName' | 'senderName', max: number) => {
        if (obj[key] === undefined) return;
        const v = obj[key];
        if (v === '' || v === null) errors[`meta.${key}`] = { code: 'validation_required', message: 'Cannot be blank.' } satisfies FieldError;
        else if (typeof v !== 'string' || v.trim() === '' || v.length > max || /[\r\n]/.test(v)) {
          errors[`meta.${key}`] = { code: 'validation_invalid_value', message: `Must be a single line of 1 to ${max} characters.` } satisfies FieldError;
        } else next[key] = v.trim();
      };
      text('appName', 255);
      text('senderName', 255);
      if (obj.appUrl !== undefined) {
        const url = httpUrl(obj.appUrl);
        if (!url) errors['meta.appUrl'] = { code: 'validation_invalid_url', message: 'Must be an http(s) URL.' };
        else next.appUrl = url.replace(/\/+$/, '');
      }
      if (obj.senderAddress !== undefined) {
        if (typeof obj.senderAddress !== 'string' || !isEmail(obj.senderAddress.trim())) {
          errors['meta.senderAddress'] = { code: 'validation_is_email', message: 'Must be a valid email address.' };
        } else next.senderAddress = obj.senderAddress.trim();
      }
      return next;
    },
    view: (value) => value,
  };
}
