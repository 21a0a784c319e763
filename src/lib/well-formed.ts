const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a parsed JSON value holds, in a string or a key, half of a UTF-16 surrogate pair (JSON's
 * `"\udc00"`): no UTF-8 text can hold one, so the databases would store U+FFFD in its place and the
 * value would not read back as written.
 */
export function holdsLoneSurrogate(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return true;
    } else if (Array.isArray(v)) {
      // One by one: spreading a body's array of some 100,000 items into push() overflows the stack.
      for (const item of v) pending.push(item);
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        if (LONE_SURROGATE.test(key)) return true;
        pending.push(item);
      }
    }
  }
  return false;
}
