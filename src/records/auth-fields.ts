import { isEmail } from '../collections/fields/email.ts';
import type { Collection } from '../collections/model.ts';
import type { FieldError } from '../errors.ts';
import { randomSecret } from '../lib/ids.ts';
import type { RecordDeps } from './deps.ts';

/** How passwords are checked and hashed: handed in with the records domain's dependencies. */
export type PasswordPolicy = Pick<RecordDeps, 'passwords' | 'minPasswordLength'>;

/** Column values of an auth record's system fields, ready to write. */
export type AuthColumns = Map<string, unknown>;

export interface AuthPrepared {
  columns: AuthColumns;
  errors: Record<string, FieldError>;
  /** A create's acceptable password, left unhashed because another key had an error (hooks may fix it). */
  unhashed?: string;
  /** The collection's `email` field is not required (PocketBase's `required: false`): a record may have none. */
  emailOptional?: boolean;
}

/**
 * Whether an auth collection's `email` field is optional, as PocketBase lets a collection say
 * (`required: false` on its system `email` field, kept in `options.systemFields`; v0.22's
 * `requireEmail: false` imports as that). Otherwise every auth record needs an email.
 */
export function emailOptional(collection: Collection): boolean {
  const system = collection.options.systemFields;
  if (!Array.isArray(system)) return false;
  const email = system.find((f): f is Record<string, unknown> => typeof f === 'object' && f !== null && (f as Record<string, unknown>).name === 'email');
  return email !== undefined && email.required === false;
}

const adminOnly: FieldError = { code: 'validation_admin_only', message: 'Only administrators can set this field.' };

export function newTokenKey(): string {
  return randomSecret(36);
}

/** Checks `password` and `passwordConfirm`; returns the password when both are acceptable. */
export function checkPassword(input: Record<string, unknown>, minLength: number, errors: Record<string, FieldError>, maxLength: number): string | undefined {
  const password = input.password;
  // As PocketBase: the confirmation is checked whatever is wrong with the password itself.
  const confirm = input.passwordConfirm;
  if (typeof confirm !== 'string' || confirm === '') errors.passwordConfirm = { code: 'validation_required', message: 'Cannot be blank.' };
  else if (confirm !== password) errors.passwordConfirm = { code: 'validation_values_mismatch', message: "Values don't match." };
  if (typeof password !== 'string' || password === '') {
    errors.password = { code: 'validation_required', message: 'Cannot be blank.' };
    return undefined;
  }
  if ([...password].length < minLength) {
    errors.password = { code: 'validation_min_text_constraint', message: `Must be at least ${minLength} character(s).` };
    return undefined;
  }
  if (password.length > maxLength) {
    errors.password = { code: 'validation_max_text_constraint', message: `Must be no more than ${maxLength} character(s).` };
    return undefined;
  }
  return errors.passwordConfirm ? undefined : password;
}

/**
 * PocketBase checks the form's password pair (a missing password, a missing or different
 * `passwordConfirm`) before the record's fields: while that pair is wrong, only it is reported.
 */
export function passwordErrorsFirst(errors: Record<string, FieldError>): Record<string, FieldError> {
  const form: Record<string, FieldError> = {};
  if (errors.password?.code === 'validation_required') form.password = errors.password;
  if (errors.passwordConfirm) form.passwordConfirm = errors.passwordConfirm;
  return Object.keys(form).length > 0 ? form : errors;
}

function checkEmail(value: unknown, errors: Record<string, FieldError>, optional = false): string | undefined {
  if (optional && (value === undefined || value === null || (typeof value === 'string' && value.trim() === ''))) return '';
  if (typeof value !== 'string' || value.trim() === '') {
    errors.email = { code: 'validation_required', message: 'Cannot be blank.' };
    return undefined;
  }
  const email = value.trim();
  if (!isEmail(email)) {
    errors.email = { code: 'validation_is_email', message: 'Must be a valid email address.' };
    return undefined;
  }
  return email;
}

function checkBool(input: Record<string, unknown>, key: string, errors: Record<string, FieldError>): boolean | undefined {
  const v = input[key];
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  errors[key] = { code: 'validation_invalid_bool', message: 'Must be a boolean.' };
  return undefined;
}

/**
 * Email, password and flags of a new auth record, checked; the password is left `unhashed`
 * (`hashAuthCreate` hashes it, once the write is known to go ahead).
 */
export function checkAuthCreate(input: Record<string, unknown>, privileged: boolean, policy: PasswordPolicy, optionalEmail = false): AuthPrepared {
  const errors: Record<string, FieldError> = {};
  const columns: AuthColumns = new Map();
  const email = checkEmail(input.email, errors, optionalEmail);
  const password = checkPassword(input, policy.minPasswordLength, errors, policy.passwords.maxLength);
  const emailVisibility = checkBool(input, 'emailVisibility', errors);
  const verified = checkBool(input, 'verified', errors);
  if (verified === true && !privileged) errors.verified = adminOnly;
  if (Object.keys(errors).length > 0) {
    // What is acceptable is kept for write hooks, which may fix the rest; no hashing for a refused write.
    if (email !== undefined) columns.set('email', email);
    if (emailVisibility !== undefined) columns.set('emailVisibility', emailVisibility);
    if (verified !== undefined && !errors.verified) columns.set('verified', verified);
    return { columns, errors, unhashed: password, emailOptional: optionalEmail };
  }
  columns.set('email', email);
  columns.set('emailVisibility', emailVisibility ?? false);
  columns.set('verified', verified ?? false);
  return { columns, errors, unhashed: password, emailOptional: optionalEmail };
}

/** A checked create's password hashed, with a new token key (slow: call outside a transaction). Unchanged when it has errors. */
export async function hashAuthCreate(prepared: AuthPrepared, policy: PasswordPolicy): Promise<AuthPrepared> {
  if (Object.keys(prepared.errors).length > 0 || prepared.unhashed === undefined) return prepared;
  const columns: AuthColumns = new Map(prepared.columns);
  columns.set('passwordHash', await policy.passwords.hash(prepared.unhashed));
  columns.set('tokenKey', newTokenKey());
  return { columns, errors: prepared.errors, emailOptional: prepared.emailOptional };
}

/**
 * Changes to an auth record's system fields. A new password needs `passwordConfirm`; a new password or
 * email needs, unless an administrator sets it, the `oldPassword`: a stolen token alone must not be
 * enough to take the account over (change the address, then reset the password through it). PocketBase
 * v0.22 refuses direct email changes to non-managers and has an email-change flow; Cairn has none, so
 * it asks for the password instead. A new password rotates `tokenKey`, revoking earlier tokens.
 */
export async function prepareAuthUpdate(
  input: Record<string, unknown>,
  current: { email: string; passwordHash: string; verified: boolean },
  privileged: boolean,
  policy: PasswordPolicy,
): Promise<AuthPrepared> {
  const errors: Record<string, FieldError> = {};
  const columns: AuthColumns = new Map();
  if (input.email !== undefined) {
    const email = checkEmail(input.email, errors);
    if (email !== undefined && email.toLowerCase() !== current.email.toLowerCase()) {
      columns.set('email', email);
      // A new address is unverified until confirmed again.
      if (!privileged) columns.set('verified', false);
    }
  }
  const emailVisibility = checkBool(input, 'emailVisibility', errors);
  if (emailVisibility !== undefined) columns.set('emailVisibility', emailVisibility);
  const verified = checkBool(input, 'verified', errors);
  if (verified !== undefined && verified !== current.verified) {
    if (privileged) columns.set('verified', verified);
    else errors.verified = adminOnly;
  }
  const password = input.password !== undefined ? checkPassword(input, policy.minPasswordLength, errors, policy.passwords.maxLength) : undefined;
  if (!privileged && (password !== undefined || columns.has('email'))) {
    const old = input.oldPassword;
    if (typeof old !== 'string' || !(await policy.passwords.verify(current.passwordHash, old))) {
      errors.oldPassword = { code: 'validation_invalid_old_password', message: 'Missing or invalid old password.' };
    }
  }
  if (password !== undefined && !errors.oldPassword) {
    columns.set('passwordHash', await policy.passwords.hash(password));
    columns.set('tokenKey', newTokenKey());
  }
  return { columns, errors };
}

/** The auth-record keys a write hook may change in `e.record`. */
export const HOOK_AUTH_KEYS = ['email', 'emailVisibility', 'verified', 'password'] as const;

/**
 * Applies what write hooks changed among an auth record's system keys (`HOOK_AUTH_KEYS`) to the
 * columns prepared from the request, checked as an administrator's change would be: hook code is
 * trusted, so `verified` is theirs to set and a new `password` needs neither its confirmation nor
 * the old one. On a create, a column the request left unprepared (its input had an error the hooks
 * may have fixed elsewhere) is prepared from the record now; only then is a password hashed inside
 * the write's transaction.
 */
export async function settleAuthChanges(
  changes: ReadonlyMap<string, unknown>,
  record: Record<string, unknown>,
  prepared: AuthPrepared,
  create: boolean,
  policy: PasswordPolicy,
): Promise<AuthPrepared> {
  const errors: Record<string, FieldError> = { ...prepared.errors };
  const columns: AuthColumns = new Map(prepared.columns);
  if (changes.has('email') || (create && !columns.has('email'))) {
    delete errors.email;
    const email = checkEmail(record.email, errors, prepared.emailOptional === true);
    if (email !== undefined) columns.set('email', email);
  }
  for (const key of ['emailVisibility', 'verified'] as const) {
    if (changes.has(key)) {
      delete errors[key];
      const value = checkBool(record, key, errors);
      if (value !== undefined) columns.set(key, value);
    } else if (create && !columns.has(key)) {
      columns.set(key, false);
    }
  }
  let password: string | undefined;
  if (changes.has('password')) {
    delete errors.password;
    delete errors.passwordConfirm;
    password = checkPassword({ password: record.password, passwordConfirm: record.password }, policy.minPasswordLength, errors, policy.passwords.maxLength);
  } else if (create && !columns.has('passwordHash')) {
    password = prepared.unhashed;
    if (password === undefined && !errors.password && !errors.passwordConfirm) errors.password = { code: 'validation_required', message: 'Cannot be blank.' };
  }
  if (password !== undefined) {
    columns.set('passwordHash', await policy.passwords.hash(password));
    columns.set('tokenKey', newTokenKey());
  }
  if (create && !columns.has('tokenKey')) columns.set('tokenKey', newTokenKey());
  return { columns, errors, emailOptional: prepared.emailOptional };
}
