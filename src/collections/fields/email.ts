import { readStringList } from './options.ts';
import { textField, textInput } from './text.ts';
import { type FieldType, invalid, ok, type OptionProblems } from './types.ts';

// Deliberately simple, like most server-side checks: one @, no spaces, a dot in the domain.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

function domainOptions(raw: Record<string, unknown>, problems: OptionProblems) {
  const exceptDomains = readStringList(raw, 'exceptDomains', problems);
  const onlyDomains = readStringList(raw, 'onlyDomains', problems);
  if (exceptDomains.length > 0 && onlyDomains.length > 0) {
    problems.set('onlyDomains', 'Set either exceptDomains or onlyDomains, not both.');
  }
  return { exceptDomains, onlyDomains };
}

function domainAllowed(domain: string, options: Record<string, unknown>): boolean {
  const only = options.onlyDomains as string[];
  const except = options.exceptDomains as string[];
  const d = domain.toLowerCase();
  if (only.length > 0 && !only.some((o) => o.toLowerCase() === d)) return false;
  if (except.length > 0 && except.some((e) => e.toLowerCase() === d)) return false;
  return true;
}

export const emailField: FieldType = {
  ...textField,
  name: 'email',
  normalizeOptions: domainOptions,
  prepare(value, field) {
    const text = textInput(value);
    if (text === undefined) return invalid('validation_is_email', 'Must be a valid email address.');
    if (text === '') return ok(text);
    if (!isEmail(text)) return invalid('validation_is_email', 'Must be a valid email address.');
    if (!domainAllowed(text.slice(text.lastIndexOf('@') + 1), field.options)) {
      return invalid('validation_email_domain_not_allowed', 'Email domain is not allowed.');
    }
    return ok(text);
  },
};

export const urlField: FieldType = {
  ...textField,
  name: 'url',
  normalizeOptions: domainOptions,
  prepare(value, field) {
    const text = textInput(value);
    if (text === undefined) return invalid('validation_invalid_url', 'Must be a valid url.');
    if (text === '') return ok(text);
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return invalid('validation_invalid_url', 'Must be a valid url.');
    }
    if (!/^[a-z][a-z0-9+.-]*:$/.test(url.protocol) || url.hostname === '' || text.length > 2048) {
      return invalid('validation_invalid_url', 'Must be a valid url.');
    }
    if (!domainAllowed(url.hostname, field.options)) return invalid('validation_url_domain_not_allowed', 'Url domain is not allowed.');
    return ok(text);
  },
};
