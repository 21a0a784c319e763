/**
 * PocketBase's `Collection` model as pb_hooks and migrations hold it: found through `$app`
 * (`__found`, so `$app.save` changes it) or made with `new Collection({...})` (created on save).
 * Pure: saving is `$app`'s (app.ts).
 */
import { plain } from './realm.ts';
import { FieldsList, schemaOf } from './schema.ts';

export class Collection {
  id: string;
  name: string;
  type: string;
  /** Read from the database (found by the app), so `$app.save` changes it rather than creating one. */
  __stored = false;
  constructor(c: any = {}) {
    Object.defineProperty(this, '__fields', { value: new FieldsList(), writable: true, enumerable: false });
    this.__load(c);
    this.id = c.id ?? '';
    this.name = c.name ?? '';
    this.type = c.type ?? 'base';
  }
  static __found(c: any): Collection {
    const found = new Collection(c);
    found.__stored = true;
    if (found.type === 'auth') found.__withTemplates();
    return found;
  }
  /**
   * An auth collection's mail templates and options as PocketBase's collection JSON always has them
   * (a migration sets `users.resetPasswordTemplate.body = …` on a found one): a template the
   * collection has not is given Cairn's default. `__body` leaves out the options left as they were
   * found (or last saved), and a default template left as it was, so that saving changes the keys set only and the
   * collection keeps sending Cairn's own mail unless its template was changed.
   */
  __withTemplates() {
    const self = this as any;
    const filled: Array<[string, string | undefined]> = [];
    for (const key of TEMPLATE_KEYS) {
      if (isPlain(self[key])) continue;
      self[key] = { ...DEFAULT_TEMPLATES[key] };
      filled.push([key, undefined]);
    }
    for (const [parent, key] of NESTED_TEMPLATES) {
      const owner = self[parent];
      if (!isPlain(owner) || isPlain(owner[key])) continue;
      owner[key] = { ...DEFAULT_TEMPLATES[parent] };
      filled.push([parent, key]);
    }
    const found = Object.fromEntries(AUTH_KEYS.filter((k) => self[k] !== undefined).map((k) => [k, JSON.stringify(self[k])]));
    Object.defineProperty(this, '__asFound', { value: { filled, found }, writable: true, enumerable: false, configurable: true });
  }
  /** Rules, indexes, auth options… as given: `$app.save(collection)` sends them all. v0.22's `schema` is the fields list. */
  __load(c: any) {
    for (const [k, v] of Object.entries(c ?? {})) {
      if (k === 'fields' || (k === 'schema' && !('fields' in c))) this.fields = v as any[];
      else if (k !== 'schema') (this as any)[k] = v;
    }
  }
  get fields(): FieldsList {
    return (this as any).__fields;
  }
  set fields(list: any[]) {
    (this as any).__fields = FieldsList.make(list);
  }
  /** The collection as the collections API takes it. */
  __body() {
    const { __stored, ...body } = this as any;
    const out = plain({ ...body, fields: [...this.fields] });
    const was = (this as any).__asFound as { filled: Array<[string, string | undefined]>; found: Record<string, string> } | undefined;
    if (was) {
      for (const [key, json] of Object.entries(was.found)) if (JSON.stringify(out[key]) === json) delete out[key];
      // A default template given by `__withTemplates` and left as it was is not the collection's own.
      for (const [key, sub] of was.filled) {
        const fallback = JSON.stringify(DEFAULT_TEMPLATES[key]);
        if (sub === undefined) {
          if (JSON.stringify(out[key]) === fallback) delete out[key];
        } else if (isPlain(out[key]) && JSON.stringify(out[key][sub]) === fallback) delete out[key][sub];
      }
    }
    return out;
  }
  isAuth() {
    return this.type === 'auth';
  }
  isBase() {
    return this.type === 'base';
  }
  isView() {
    return this.type === 'view';
  }
  /** v0.22's schema: the same fields. */
  get schema() {
    return schemaOf(() => this.fields);
  }
  set schema(list: any) {
    this.fields = Array.isArray(list) ? list : typeof list?.fields === 'function' ? list.fields() : [];
  }
  /** ≥ 0.23's index helpers: `CREATE [UNIQUE] INDEX name ON table (columns) [WHERE …]`. */
  addIndex(name: string, unique: boolean, columns: string, where = '') {
    this.removeIndex(name);
    const list = Array.isArray((this as any).indexes) ? (this as any).indexes : ((this as any).indexes = []);
    list.push(`CREATE ${unique ? 'UNIQUE ' : ''}INDEX \`${name}\` ON \`${this.name}\` (${columns})${where ? ` WHERE ${where}` : ''}`);
  }
  removeIndex(name: string) {
    const list: string[] = Array.isArray((this as any).indexes) ? (this as any).indexes : [];
    (this as any).indexes = list.filter((i) => indexName(i) !== name.toLowerCase());
  }
  getIndex(name: string): string {
    const list: string[] = Array.isArray((this as any).indexes) ? (this as any).indexes : [];
    return list.find((i) => indexName(i) === name.toLowerCase()) ?? '';
  }
}

const isPlain = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The auth options of ≥ 0.23 at the top level of an auth collection. */
const AUTH_KEYS = [
  'authRule', 'manageRule', 'authAlert', 'oauth2', 'passwordAuth', 'mfa', 'otp', 'authToken', 'passwordResetToken',
  'emailChangeToken', 'verificationToken', 'fileToken', 'verificationTemplate', 'resetPasswordTemplate', 'confirmEmailChangeTemplate',
];
const TEMPLATE_KEYS = ['verificationTemplate', 'resetPasswordTemplate', 'confirmEmailChangeTemplate'] as const;
const NESTED_TEMPLATES = [['otp', 'emailTemplate'], ['authAlert', 'emailTemplate']] as const;

/** Cairn's mails (src/auth/mail/templates.ts) as templates with PocketBase's placeholders. */
const DEFAULT_TEMPLATES: Record<string, { subject: string; body: string }> = {
  verificationTemplate: {
    subject: 'Verify your {APP_NAME} email',
    body: '<p>Hello,</p>\n<p>Thank you for joining {APP_NAME}. Confirm your email address with the link below.</p>\n<p><a href="{APP_URL}/_/#/auth/confirm-verification/{TOKEN}">Verify</a></p>\n<p>If you did not sign up, ignore this email.</p>\n<p>{APP_NAME}</p>',
  },
  resetPasswordTemplate: {
    subject: 'Reset your {APP_NAME} password',
    body: '<p>Hello,</p>\n<p>A password reset was requested for your {APP_NAME} account. Choose a new password with the link below.</p>\n<p><a href="{APP_URL}/_/#/auth/confirm-password-reset/{TOKEN}">Reset password</a></p>\n<p>If you did not ask to reset your password, ignore this email: your password stays as it is.</p>\n<p>{APP_NAME}</p>',
  },
  confirmEmailChangeTemplate: {
    subject: 'Confirm your {APP_NAME} new email address',
    body: '<p>Hello,</p>\n<p>A change of your {APP_NAME} account\'s email address to this one was requested. Confirm it with the link below and your password.</p>\n<p><a href="{APP_URL}/_/#/auth/confirm-email-change/{TOKEN}">Confirm new email</a></p>\n<p>If you did not ask to change your email address, ignore this email: your account keeps its address.</p>\n<p>{APP_NAME}</p>',
  },
  otp: {
    subject: 'Your {APP_NAME} sign-in code',
    body: '<p>Hello,</p>\n<p>Your one-time code to sign in to {APP_NAME}:</p>\n<p><strong>Code: <code>{OTP}</code></strong></p>\n<p>If you did not ask to sign in, ignore this email: nobody can sign in without the code.</p>\n<p>{APP_NAME}</p>',
  },
  authAlert: {
    subject: 'Your {APP_NAME} account was signed in to from a new location',
    body: '<p>Hello,</p>\n<p>Your {APP_NAME} account was just signed in to from a new location:</p>\n<p><em>{ALERT_INFO}</em></p>\n<p>If it was not you, change your password at once: that ends every session.</p>\n<p>{APP_NAME}</p>',
  },
};

function indexName(statement: string): string {
  const m = /INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?[`"\[]?([^`"\]\s(]+)/i.exec(statement);
  return (m?.[1] ?? '').toLowerCase();
}

/** A collection argument (`"posts"` or a Collection) as the `{ id, name, type }` a record keeps. */
export function collectionOf(nameOrId: any): any {
  if (nameOrId && typeof nameOrId === 'object') return { id: nameOrId.id, name: nameOrId.name, type: nameOrId.type };
  return { id: '', name: String(nameOrId), type: 'base' };
}
