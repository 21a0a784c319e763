/**
 * Most levels of nesting accepted in JSON from clients. JSON.stringify and every other walk over a
 * value recurse, so a body of 20,000 nested arrays (40 KB) would overflow the stack wherever it is
 * next serialized. SQLite's JSON functions stop at the same depth (json fields allow 500).
 */
export const MAX_JSON_DEPTH = 1000;

/** Whether JSON `text` nests arrays and objects deeper than `max` (strings are skipped). */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  // Each level needs a bracket: short texts cannot be too deep, and most bodies are short.
  if (text.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
