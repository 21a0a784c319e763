import { normalizeDate } from '../lib/time.ts';

/**
 * PocketBase's stored values → the column values Cairn stores. PocketBase keeps what Cairn keeps
 * (text, numbers, 0/1 booleans, JSON text for lists and JSON fields) except dates, which it writes as
 * `2024-01-02 03:04:05.678Z` where Cairn writes ISO 8601 (`2024-01-02T03:04:05.678Z`).
 */

export type Converter = (raw: unknown) => unknown;

export const toText: Converter = (raw) => (raw === null || raw === undefined ? '' : typeof raw === 'string' ? raw : String(raw));

export const toNumber: Converter = (raw) => {
  const n = typeof raw === 'number' ? raw : Number(raw ?? 0);
  return Number.isFinite(n) ? n : 0;
};

export const toBool: Converter = (raw) => (raw === 1 || raw === true || raw === '1' || raw === 'true' ? 1 : 0);

/** A PocketBase date (or '') as Cairn's ISO form; text that is no date becomes ''. */
export const toDate: Converter = (raw) => {
  if (raw === null || raw === undefined || raw === '') return '';
  return normalizeDate(String(raw)) ?? '';
};

/** PocketBase's JSON values are text, or a blob of the same bytes. */
const textOf = (raw: unknown): unknown => (Buffer.isBuffer(raw) ? raw.toString('utf8') : raw);

function listOf(value: unknown): string[] {
  const raw = textOf(value);
  if (raw === null || raw === undefined || raw === '') return [];
  if (typeof raw === 'string' && raw.startsWith('[')) {
    try {
      const parsed = JSON.parse(raw);
      if (Array.isArray(parsed)) return [...new Set(parsed.filter((v): v is string => typeof v === 'string' && v !== ''))];
    } catch {
      // Not a list after all: a single value that starts with "[".
    }
  }
  return [String(raw)];
}

/** A multiple select, relation or file value: a JSON array of strings. */
export const toList: Converter = (raw) => JSON.stringify(listOf(raw));

/** A single select, relation or file value; a list left from a field that held several keeps its first. */
export const toSingle: Converter = (raw) => listOf(raw)[0] ?? '';

/** A JSON value as JSON text (NULL for none); text that is not JSON becomes a JSON string. */
export const toJson: Converter = (value) => {
  const raw = textOf(value);
  if (raw === null || raw === undefined || raw === '') return null;
  if (typeof raw !== 'string') return JSON.stringify(raw);
  try {
    return JSON.parse(raw) === null ? null : raw;
  } catch {
    return JSON.stringify(raw);
  }
};

/** The names a file field value holds (to copy the files). */
export function fileNamesOf(raw: unknown): string[] {
  return listOf(raw);
}

/** A geoPoint: PocketBase stores `{"lon":…,"lat":…}` as JSON text. */
export const toGeoPoint: Converter = (value) => {
  const raw = textOf(value);
  if (typeof raw !== 'string' || raw === '') return JSON.stringify({ lon: 0, lat: 0 });
  try {
    const p = JSON.parse(raw) as { lon?: unknown; lat?: unknown };
    return JSON.stringify({ lon: Number(p?.lon) || 0, lat: Number(p?.lat) || 0 });
  } catch {
    return JSON.stringify({ lon: 0, lat: 0 });
  }
};
