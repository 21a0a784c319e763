/** Timestamps are ISO 8601 UTC with milliseconds, which also sort correctly as strings. */
export function nowIso(): string {
  const ms = Date.now();
  // A batch of writes stamps many rows within one millisecond; formatting a date is what costs.
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

let lastMs = -1;
let lastIso = '';

// PocketBase writes "2024-01-02 03:04:05.678Z"; clients copy that form into filters and values.
const PB_DATE = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Parses the date forms clients send (ISO 8601, PocketBase's space-separated form, a bare date) into
 * the canonical stored form, or returns undefined when the text is not a date. */
export function normalizeDate(input: string): string | undefined {
  const text = input.trim();
  let candidate: string;
  if (DATE_ONLY.test(text)) candidate = `${text}T00:00:00.000Z`;
  else {
    const m = PB_DATE.exec(text);
    if (!m) return undefined;
    candidate = `${m[1]}T${m[2]}${m[3] ?? 'Z'}`;
  }
  const d = new Date(candidate);
  if (Number.isNaN(d.getTime())) return undefined;
  // Reject dates JavaScript silently rolls over, such as 2024-02-31.
  const [y, mo, da] = text.slice(0, 10).split('-').map(Number);
  if (!isCalendarDate(y, mo, da)) return undefined;
  return d.toISOString();
}

function isCalendarDate(y: number, mo: number, d: number): boolean {
  const probe = new Date(Date.UTC(y, mo - 1, d));
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === mo - 1 && probe.getUTCDate() === d;
}

/**
 * A stored timestamp (ISO 8601, `2026-12-01T23:18:21.453Z`) written as PocketBase writes dates in its
 * answers (`2026-12-01 23:18:21.453Z`; API contract §23). Storage keeps the ISO form, which sorts
 * and compares as before on both engines; only what goes out changes. Anything that is not such a
 * timestamp (an empty date, a value a view computed) is given back as it is.
 */
export function pbDate(value: unknown): unknown {
  return typeof value === 'string' && value.length > 10 && value.charCodeAt(10) === 84 /* T */ && value.charCodeAt(4) === 45 && value.charCodeAt(7) === 45 ? `${value.slice(0, 10)} ${value.slice(11)}` : value;
}

/** The stored form of a date written as `pbDate` writes it (the inverse, for JSON turned back into a row). */
export function isoDate(value: unknown): unknown {
  return typeof value === 'string' && value.length > 10 && value.charCodeAt(10) === 32 && value.charCodeAt(4) === 45 && value.charCodeAt(7) === 45 ? `${value.slice(0, 10)}T${value.slice(11)}` : value;
}
