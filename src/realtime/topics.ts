import { badRequest, type FieldError } from '../errors.ts';

/** Longest accepted topic, options included (PocketBase's limit). */
export const MAX_TOPIC_LENGTH = 2500;
/** Longest accepted client id (PocketBase's limit; Cairn's own are 40 characters). */
const MAX_CLIENT_ID_LENGTH = 255;

/** The `?options=` of a topic: request data the subscription's rules and output see, as PocketBase's SDK sends them. */
export interface TopicOptions {
  /** `@request.query.*`; `expand`, `fields` and `filter` shape the messages. */
  query: Record<string, string>;
  /** `@request.headers.*`. */
  headers: Record<string, string>;
  /** A text equal for equal options, so subscriptions with the same options share their evaluation. */
  key: string;
}

export interface Topic {
  /** The topic exactly as subscribed: the event name of its messages. */
  name: string;
  /** The collection, by name (any case) or id, as written. */
  collection: string;
  /** One record's id; undefined for every record of the collection (`posts`, `posts/*`). */
  recordId?: string;
  options: TopicOptions;
}

const NO_OPTIONS: TopicOptions = { query: {}, headers: {}, key: '' };

function stringValues(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    // Single string values only, as PocketBase reads them; numbers and booleans as their text.
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
  }
  return out;
}

function sortedKey(query: Record<string, string>, headers: Record<string, string>): string {
  const sorted = (o: Record<string, string>) => Object.keys(o).sort().map((k) => [k, o[k]]);
  return JSON.stringify([sorted(query), sorted(headers)]);
}

/** The SDK's `?options=<url-encoded JSON {query, headers}>`; anything unreadable counts as no options. */
function parseOptions(search: string): TopicOptions {
  const raw = new URLSearchParams(search).get('options');
  if (raw === null || raw === '') return NO_OPTIONS;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return NO_OPTIONS;
  }
  if (typeof parsed !== 'object' || parsed === null) return NO_OPTIONS;
  const query = stringValues((parsed as Record<string, unknown>).query);
  const headers = stringValues((parsed as Record<string, unknown>).headers);
  if (Object.keys(query).length === 0 && Object.keys(headers).length === 0) return NO_OPTIONS;
  return { query, headers, key: sortedKey(query, headers) };
}

/**
 * A topic as PocketBase reads it: `<collection>`, `<collection>/*` or `<collection>/<recordId>`, then
 * optional options. Topics of another form are accepted and never receive anything, as in PocketBase
 * (undefined here).
 */
export function parseTopic(name: string): Topic | undefined {
  const q = name.indexOf('?');
  const base = q === -1 ? name : name.slice(0, q);
  const parts = base.split('/');
  if (parts.length > 2 || parts[0] === '' || (parts.length === 2 && parts[1] === '')) return undefined;
  const options = q === -1 ? NO_OPTIONS : parseOptions(name.slice(q + 1));
  const recordId = parts.length === 2 && parts[1] !== '*' ? parts[1] : undefined;
  return { name, collection: parts[0], recordId, options };
}

export interface SubscribeRequest {
  clientId: string;
  /** Distinct, non-empty topics, in the order given. */
  topics: string[];
}

/** Checks a `POST /api/realtime` body: 400 in the contract's shape for anything out of bounds. */
export function parseSubscribeRequest(body: unknown, maxSubscriptions: number): SubscribeRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const { clientId, subscriptions } = body as Record<string, unknown>;
  const errors: Record<string, FieldError> = {};
  if (typeof clientId !== 'string' || clientId === '') errors.clientId = { code: 'validation_required', message: 'Cannot be blank.' };
  else if (clientId.length > MAX_CLIENT_ID_LENGTH) errors.clientId = { code: 'validation_length_out_of_range', message: `Must be at most ${MAX_CLIENT_ID_LENGTH} characters.` };

  let topics: string[] = [];
  if (subscriptions !== undefined && subscriptions !== null) {
    if (!Array.isArray(subscriptions) || subscriptions.some((s) => typeof s !== 'string')) {
      errors.subscriptions = { code: 'validation_invalid_value', message: 'Must be a list of topics.' };
    } else if (subscriptions.length > maxSubscriptions) {
      errors.subscriptions = { code: 'validation_length_too_long', message: `At most ${maxSubscriptions} subscriptions per client.` };
    } else {
      const long = subscriptions.findIndex((s: string) => s.length > MAX_TOPIC_LENGTH);
      // A topic is the event name of its messages: a line break in it would end the field early.
      const broken = subscriptions.findIndex((s: string) => /[\r\n\0]/.test(s));
      if (long !== -1) errors.subscriptions = { code: 'validation_length_too_long', message: `Topic ${long} is longer than ${MAX_TOPIC_LENGTH} characters.` };
      else if (broken !== -1) errors.subscriptions = { code: 'validation_invalid_value', message: `Topic ${broken} contains a line break or NUL character.` };
      else topics = [...new Set(subscriptions.filter((s: string) => s !== ''))];
    }
  }
  if (Object.keys(errors).length > 0) throw badRequest('Failed to validate the submitted data.', errors);
  return { clientId: clientId as string, topics };
}
