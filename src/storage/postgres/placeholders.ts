/**
 * Cairn's SQL is written once for both databases, in SQLite's habits; two of them differ on
 * PostgreSQL and are translated here, once per distinct statement text:
 *
 * - Placeholders: `?` becomes `$1`, `$2`, … (only when the statement has parameters, so user SQL
 *   without any, such as a view, keeps a `?` operator).
 * - Identifiers: SQLite keeps the case of an unquoted name, PostgreSQL folds it to lower case, so
 *   `passwordHash` would come back as `passwordhash`. An unquoted word mixing upper and lower case is
 *   quoted, keeping its case as SQLite does. Keywords are written in upper case and names in lower or
 *   mixed case, so no keyword is touched.
 *
 * Quoted strings and identifiers, comments and dollar-quoted bodies are copied as they are.
 */

const CACHE_LIMIT = 2000;
const cache = new Map<string, string>();

const WORD_START = /[A-Za-z_]/;
const WORD = /[A-Za-z0-9_$]/;

function translate(text: string, numbered: boolean): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      // Quoted text runs to the next unpaired quote of the same kind ('' and "" are escapes).
      let j = i + 1;
      while (j < text.length) {
        if (text[j] === ch) {
          if (text[j + 1] === ch) j += 2;
          else break;
        } else j++;
      }
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      const j = end === -1 ? text.length : end;
      out += text.slice(i, j);
      i = j;
    } else if (ch === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(text.slice(i, i + 64));
      if (tag) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        const j = end === -1 ? text.length : end + tag[0].length;
        out += text.slice(i, j);
        i = j;
      } else {
        out += ch;
        i++;
      }
    } else if (ch === '?' && numbered) {
      out += `$${++n}`;
      i++;
    } else if (WORD_START.test(ch) || (ch >= '0' && ch <= '9')) {
      let j = i + 1;
      while (j < text.length && WORD.test(text[j])) j++;
      const word = text.slice(i, j);
      const mixed = WORD_START.test(ch) && /[a-z]/.test(word) && /[A-Z]/.test(word);
      out += mixed ? `"${word}"` : word;
      i = j;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** The statement as PostgreSQL reads it; see above. */
export function toPostgres(text: string, numbered: boolean): string {
  const key = numbered ? text : `\u0001${text}`;
  let out = cache.get(key);
  if (out === undefined) {
    out = translate(text, numbered);
    // Generated SQL (filters) is unbounded; dropping the whole map now and then beats LRU bookkeeping.
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, out);
  }
  return out;
}
