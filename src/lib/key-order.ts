/**
 * Go's order of map keys (by their UTF-8 bytes): PocketBase writes records, `expand` and picked
 * `fields` as maps, so their keys come in this order (API contract §23).
 */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
