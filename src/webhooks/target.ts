import type { FieldError } from '../errors.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import { isPlainObject } from '../lib/objects.ts';

/**
 * Where an outbound webhook goes: URL, method, extra headers and the optional Standard Webhooks
 * signing secret. Collection triggers, cron jobs and workflow `webhook` steps all describe their
 * target this way, so they share its validation.
 */
export interface Target {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** `whsec_<base64>`, or '' for unsigned deliveries. */
  secret: string;
}

export type Problems = Record<string, FieldError>;

const err = (code: string, message: string): FieldError => ({ code, message });

const MAX_URL_LENGTH = 2048;
const MAX_HEADERS = 50;
const MAX_HEADER_VALUE = 4096;
// RFC 9110 token characters.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
// Headers Cairn computes for every delivery (body framing, Standard Webhooks), which a configured
// header must not replace. `authorization` may be replaced: third-party receivers often want their own.
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);

/** Standard Webhooks: a symmetric secret is `whsec_` followed by 24 to 64 random bytes in base64. */
const SECRET_FORM = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
const SECRET_MIN_BYTES = 24;
const SECRET_MAX_BYTES = 64;

/**
 * An outbound URL. With `outbound` (when a target is saved through the API), a URL whose host is
 * literally a refused address or name (link-local, cloud metadata: lib/outbound.ts) is a problem
 * too, so the administrator hears it at once. Names are not resolved here: DNS answers change, so
 * the resolved address is checked on every connection (deliver.ts), whatever was saved.
 */
export function checkUrl(value: unknown, problems: Problems, key = 'url', outbound?: OutboundPolicy): string | undefined {
  if (typeof value !== 'string' || value === '') {
    problems[key] = err('validation_required', 'Must be an http:// or https:// URL.');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems[key] = err('validation_invalid_url', 'Must be an http:// or https:// URL.');
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems[key] = err('validation_invalid_url', 'Must be an http:// or https:// URL.');
  } else if (value.length > MAX_URL_LENGTH) {
    problems[key] = err('validation_invalid_url', `At most ${MAX_URL_LENGTH} characters.`);
  } else if (url.username !== '' || url.password !== '') {
    problems[key] = err('validation_invalid_url', 'Credentials in the URL are not allowed; put them in `headers`.');
  } else {
    const refused = outbound?.refusedHost(url.hostname);
    if (!refused) return value;
    problems[key] = err('validation_url_not_allowed', refused);
  }
  return undefined;
}

/** `allowed` lists the methods in upper case; input is case-insensitive and defaults to POST. */
export function checkMethod(value: unknown, allowed: readonly string[], problems: Problems, key = 'method'): string | undefined {
  if (value === undefined || value === null || value === '') return 'POST';
  if (typeof value !== 'string' || !allowed.includes(value.toUpperCase())) {
    problems[key] = err('validation_invalid_method', `Must be one of ${allowed.join(', ')}.`);
    return undefined;
  }
  return value.toUpperCase();
}

export function checkHeaders(value: unknown, problems: Problems, key = 'headers'): Record<string, string> | undefined {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) {
    problems[key] = err('validation_invalid_headers', 'Must be an object of header names to string values.');
    return undefined;
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) {
    problems[key] = err('validation_invalid_headers', `At most ${MAX_HEADERS} headers.`);
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [name, v] of entries) {
    if (!HEADER_NAME.test(name)) {
      problems[key] = err('validation_invalid_headers', `"${name.slice(0, 100)}" is not a valid header name.`);
      return undefined;
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      problems[key] = err('validation_invalid_headers', `The "${name}" header is set by Cairn and cannot be configured.`);
      return undefined;
    }
    // CR, LF and NUL would let a value smuggle further headers into the request.
    if (typeof v !== 'string' || v.length > MAX_HEADER_VALUE || /[\r\n\0]/.test(v)) {
      problems[key] = err('validation_invalid_headers', `The value of "${name}" must be a single-line string of at most ${MAX_HEADER_VALUE} characters.`);
      return undefined;
    }
    out[name.toLowerCase()] = v;
  }
  return out;
}

export function checkSecret(value: unknown, problems: Problems, key = 'secret'): string | undefined {
  if (value === undefined || value === null || value === '') return '';
  const m = typeof value === 'string' ? SECRET_FORM.exec(value) : null;
  const bytes = m ? Buffer.from(m[1], 'base64').length : 0;
  if (!m || bytes < SECRET_MIN_BYTES || bytes > SECRET_MAX_BYTES) {
    problems[key] = err(
      'validation_invalid_secret',
      `Must be a Standard Webhooks secret: "whsec_" followed by ${SECRET_MIN_BYTES} to ${SECRET_MAX_BYTES} random bytes in base64 (for example "whsec_" + \`openssl rand -base64 32\`).`,
    );
    return undefined;
  }
  return value as string;
}

/** The HMAC key of a `whsec_` secret: its base64-decoded bytes, as Standard Webhooks libraries use it. */
export function signingKey(secret: string): Buffer {
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
}

/** The origin (scheme, host, port) of a URL: the unit of delivery concurrency. */
export function originOf(url: string): string {
  return new URL(url).origin;
}
