/**
 * A view's SQL written for SQLite (PocketBase's `viewQuery` always is), rewritten for PostgreSQL as
 * far as a token-level rewrite goes: backtick identifiers, `==`, mixed-case names left unquoted (PostgreSQL
 * folds them to lower case, Cairn's columns keep theirs), and SQLite's date, JSON and aggregate
 * functions (`julianday`, `strftime`, `datetime`, `date`, `json_extract`, `json_group_array`,
 * `group_concat`, `ifnull`, `iif`, …). What it cannot rewrite (SQLite's bare columns beside an
 * aggregate, a `GROUP BY` PostgreSQL finds incomplete) is left as written and PostgreSQL's error stands.
 * Used only when PostgreSQL refused the query as written (src/migrations/views.ts).
 */

type Token = { kind: 'string' | 'quoted' | 'word' | 'open' | 'close' | 'comma' | 'other'; text: string };

const TOKENS = /'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|[A-Za-z_][A-Za-z0-9_$]*|\(|\)|,|==|\s+|--[^\n]*|./gs;

function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  for (const [t] of sql.matchAll(TOKENS)) {
    if (t.startsWith("'")) out.push({ kind: 'string', text: t });
    else if (t.startsWith('"')) out.push({ kind: 'quoted', text: t });
    else if (t.startsWith('`')) out.push({ kind: 'quoted', text: `"${t.slice(1, -1).replace(/"/g, '""')}"` });
    // `[name]` is SQLite's third identifier quote; PostgreSQL reads brackets as array subscripts.
    else if (t.startsWith('[') && /^\[[A-Za-z_][A-Za-z0-9_ ]*\]$/.test(t)) out.push({ kind: 'quoted', text: `"${t.slice(1, -1)}"` });
    else if (/^[A-Za-z_]/.test(t)) out.push({ kind: 'word', text: t });
    else if (t === '(') out.push({ kind: 'open', text: t });
    else if (t === ')') out.push({ kind: 'close', text: t });
    else if (t === ',') out.push({ kind: 'comma', text: t });
    else if (t === '==') out.push({ kind: 'other', text: '=' });
    else out.push({ kind: 'other', text: t });
  }
  return out;
}

/** Words that are SQL, never a column to quote, whatever their letter case. */
const KEYWORDS = new Set(
  'select from where and or not as on join left right inner outer full cross group by order having limit offset union all distinct case when then else end is null in like ilike glob between exists with asc desc over partition true false cast recursive using natural current_timestamp current_date current_time nulls first last filter window rows range preceding following unbounded row escape collate interval'.split(
    ' ',
  ),
);

/** The text of a string literal, unquoted. */
const literal = (t: string | undefined): string | undefined => (t !== undefined && /^'(?:[^']|'')*'$/.test(t.trim()) ? t.trim().slice(1, -1).replace(/''/g, "'") : undefined);
const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** A SQLite time value as a PostgreSQL timestamp: `'now'`, a date text (an empty one is null), a Julian day is not read. */
function timestamp(arg: string | undefined, modifiers: string[]): string {
  const text = literal(arg);
  let ts = arg === undefined || text?.toLowerCase() === 'now' ? 'CURRENT_TIMESTAMP' : `CAST(NULLIF(CAST(${arg} AS text), '') AS timestamptz)`;
  for (const m of modifiers) {
    const mod = literal(m)?.trim().toLowerCase();
    if (mod === undefined) continue;
    const start = /^start of (day|month|year)$/.exec(mod);
    if (start) ts = `date_trunc('${start[1]}', ${ts})`;
    else if (/^[+-]?\d+(\.\d+)?\s+(second|minute|hour|day|month|year)s?$/.test(mod)) ts = `(${ts} + INTERVAL ${quote(mod)})`;
  }
  return ts;
}

const STRFTIME: Record<string, string> = { Y: 'YYYY', m: 'MM', d: 'DD', H: 'HH24', M: 'MI', S: 'SS', f: 'SS.MS', j: 'DDD', W: 'IW', w: 'D', '%': '%' };

/** SQLite's `strftime` format as `to_char`'s; undefined when it uses what `to_char` has no match for. */
function toCharFormat(format: string): string | undefined {
  let out = '';
  for (let i = 0; i < format.length; i++) {
    if (format[i] === '%') {
      const spec = STRFTIME[format[++i]];
      if (spec === undefined) return undefined;
      out += spec;
    } else out += /[A-Za-z]/.test(format[i]) ? `"${format[i]}"` : format[i];
  }
  return out;
}

const utc = (ts: string, format: string) => `to_char(${ts} AT TIME ZONE 'UTC', '${format}')`;

/** A call of SQLite's function `name` with (rewritten) arguments, in PostgreSQL's terms; undefined keeps it. */
function rewriteCall(name: string, args: string[]): string | undefined {
  switch (name.toLowerCase()) {
    case 'julianday':
      return `(EXTRACT(EPOCH FROM ${timestamp(args[0], args.slice(1))}) / 86400.0 + 2440587.5)`;
    case 'unixepoch':
      return `CAST(EXTRACT(EPOCH FROM ${timestamp(args[0], args.slice(1))}) AS bigint)`;
    case 'datetime':
      return utc(timestamp(args[0], args.slice(1)), 'YYYY-MM-DD HH24:MI:SS');
    case 'date':
      return utc(timestamp(args[0], args.slice(1)), 'YYYY-MM-DD');
    case 'time':
      return utc(timestamp(args[0], args.slice(1)), 'HH24:MI:SS');
    case 'strftime': {
      const format = literal(args[0]);
      if (format === undefined) return undefined;
      const ts = timestamp(args[1], args.slice(2));
      if (format === '%s') return `CAST(CAST(EXTRACT(EPOCH FROM ${ts}) AS bigint) AS text)`;
      const pg = toCharFormat(format);
      return pg === undefined ? undefined : utc(ts, pg);
    }
    case 'json_extract': {
      const path = literal(args[1]);
      if (args.length !== 2 || path === undefined || !path.startsWith('$')) return undefined;
      const parts = [...path.slice(1).matchAll(/\.("?)([^.[\]"]+)\1|\[(\d+)\]/g)].map((m) => m[2] ?? m[3]);
      return `(CAST(${args[0]} AS jsonb) #>> ${quote(`{${parts.map((p) => `"${p.replace(/"/g, '\\"')}"`).join(',')}}`)})`;
    }
    case 'json_group_array':
      return `json_agg(${args.join(', ')})`;
    case 'json_object':
      return `json_build_object(${args.join(', ')})`;
    case 'json_array':
      return `json_build_array(${args.join(', ')})`;
    case 'json_array_length':
      return args.length === 1 ? `json_array_length(CAST(${args[0]} AS json))` : undefined;
    case 'group_concat':
      return `string_agg(CAST(${args[0]} AS text), ${args[1] ?? "','"})`;
    case 'ifnull':
      return `COALESCE(${args.join(', ')})`;
    case 'iif':
      return args.length === 3 ? `(CASE WHEN ${args[0]} THEN ${args[1]} ELSE ${args[2]} END)` : undefined;
    case 'instr':
      return args.length === 2 ? `strpos(${args[0]}, ${args[1]})` : undefined;
    case 'round':
      // PostgreSQL rounds to places only a numeric (SQLite's REAL is its double precision).
      return args.length === 2 ? `round(CAST(${args[0]} AS numeric), ${args[1]})` : undefined;
    case 'total':
      return `COALESCE(SUM(${args[0]}), 0.0)`;
    default:
      return undefined;
  }
}

/** Rewrites tokens[from…] up to the closing parenthesis of the current level (or the end); returns the text and where it stopped. */
function rewrite(tokens: Token[], from: number): { text: string; next: number } {
  let out = '';
  let i = from;
  while (i < tokens.length && tokens[i].kind !== 'close') {
    const t = tokens[i];
    if (t.kind === 'word') {
      let j = i + 1;
      while (j < tokens.length && tokens[j].kind === 'other' && /^\s+$/.test(tokens[j].text)) j++;
      if (tokens[j]?.kind === 'open' && !KEYWORDS.has(t.text.toLowerCase())) {
        // A call: its arguments, split at this level's commas, each rewritten first.
        const inner = rewrite(tokens, j + 1);
        const args = inner.text.trim() === '' ? [] : splitCommas(inner.text).map((a) => a.trim());
        const space = tokens.slice(i + 1, j).map((w) => w.text).join('');
        out += rewriteCall(t.text, args) ?? `${t.text}${space}(${inner.text})`;
        i = inner.next + 1;
        continue;
      }
      const prev = out.trimEnd().slice(-1);
      const mixed = /[a-z]/.test(t.text) && /[A-Z]/.test(t.text);
      out += mixed && !KEYWORDS.has(t.text.toLowerCase()) && prev !== ':' ? `"${t.text}"` : t.text;
    } else if (t.kind === 'open') {
      const inner = rewrite(tokens, i + 1);
      out += `(${inner.text})`;
      i = inner.next + 1;
      continue;
    } else if (t.kind === 'string' && /\bAS\s*$/i.test(out)) {
      // SQLite takes a string literal as a column alias (`AS 'name'`); PostgreSQL an identifier only.
      out += `"${t.text.slice(1, -1).replace(/''/g, "'").replace(/"/g, '""')}"`;
    } else out += t.text;
    i++;
  }
  return { text: out, next: i };
}

/** Splits at commas outside parentheses and string literals. */
function splitCommas(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const t of tokenize(text)) {
    if (t.kind === 'open') depth++;
    if (t.kind === 'close') depth--;
    if (t.kind === 'comma' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += t.text;
  }
  parts.push(current);
  return parts;
}

const CLAUSE = 'ON|USING|WHERE|GROUP|ORDER|LIMIT|OFFSET|LEFT|RIGHT|INNER|OUTER|FULL|CROSS|NATURAL|JOIN|UNION|EXCEPT|INTERSECT|HAVING|WINDOW';
const NAME = '(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)';
/** `JOIN t [AS] [alias]` with no `ON` or `USING` after it: SQLite's cross join, which PostgreSQL writes `ON TRUE`. */
const BARE_JOIN = new RegExp(
  `(?<!\\b(?:CROSS|NATURAL)\\s+)\\bJOIN(\\s+${NAME}(?:\\.${NAME})?(?:\\s+(?:AS\\s+)?(?!(?:${CLAUSE})\\b)${NAME})?)(?=\\s*(?:$|\\)|,|(?:${CLAUSE.replace('ON|USING|', '')})\\b))`,
  'gi',
);

/** The query rewritten for PostgreSQL; the same text when nothing in it is SQLite's alone. */
export function sqliteViewForPostgres(query: string, booleans: ReadonlySet<string> = new Set()): string {
  const out = rewriteTokens(query).replace(BARE_JOIN, 'JOIN$1 ON TRUE');
  if (booleans.size === 0) return out;
  // SQLite's booleans are 0 and 1: `done = 0` on a column PostgreSQL stores as boolean compares with FALSE.
  return out.replace(new RegExp(`(${NAME}(?:\\.${NAME})*)(\\s*(?:=|!=|<>)\\s*)([01])(?![\\w.])`, 'g'), (all, name: string, op: string, digit: string) => {
    const column = name.split('.').pop()!.replace(/^"|"$/g, '');
    return booleans.has(column) ? `${name}${op}${digit === '1' ? 'TRUE' : 'FALSE'}` : all;
  });
}

function rewriteTokens(query: string): string {
  const tokens = tokenize(query);
  let out = '';
  let i = 0;
  while (i < tokens.length) {
    const part = rewrite(tokens, i);
    out += part.text;
    i = part.next;
    // An unbalanced `)`: kept, and PostgreSQL reports it.
    if (i < tokens.length) out += tokens[i++].text;
  }
  return out;
}

/**
 * The query with the column reference at `offset` (where PostgreSQL reported a grouping error) read
 * from one row of its group, `(array_agg(x))[1]`: SQLite's bare column beside an aggregate. Undefined
 * when no name starts there.
 */
export function bareColumnAt(sql: string, offset: number): string | undefined {
  if (offset < 0 || offset >= sql.length) return undefined;
  const m = new RegExp(`^${NAME}(?:\\.${NAME})*`).exec(sql.slice(offset));
  if (!m || KEYWORDS.has(m[0].toLowerCase())) return undefined;
  const before = sql.slice(0, offset);
  const after = sql.slice(offset + m[0].length);
  // A bare name in the select list keeps its column's name (SQLite's `t.id` is a column `id`).
  const last = m[0].split('.').pop()!;
  const alias = /(?:\bSELECT|,)\s*$/i.test(before) && /^\s*(?:,|FROM\b)/i.test(after) ? ` AS ${last.startsWith('"') ? last : `"${last}"`}` : '';
  return `${before}(array_agg(${m[0]}))[1]${alias}${after}`;
}
