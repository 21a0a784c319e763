/** A JSON object: not null, not an array (a body, an options bag, a parsed document's mapping). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
