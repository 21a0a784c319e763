import { fieldType } from './fields/registry.ts';
import type { Collection, FieldDef } from './model.ts';

/**
 * A view's fields typed as PocketBase types them: from where each column comes, not from the SQL
 * type the database gives it. A column read as it is from a collection (`s.series`, `title AS t`) is
 * that field under the column's name (a relation stays a relation, a date a date, a select keeps its
 * values); another collection's `id` is a relation to it, its `created`/`updated` an autodate;
 * `count(…)`/`total(…)` and a cast to a number are numbers, any other expression, or a column of
 * a subquery or a WITH table, json. `*` and a compound SELECT keep the types the database gives.
 */

type Lookup = (nameOrId: string) => Collection | undefined;

const NAME = String.raw`(?:\`[^\`]+\`|"[^"]+"|\[[^\]]+\]|[A-Za-z_][A-Za-z0-9_]*)`;
const COLUMN_REF = new RegExp(`^(?:(${NAME})\\s*\\.\\s*)?(${NAME})$`);
const AS_ALIAS = new RegExp(`^([\\s\\S]+?)\\s+(?:AS\\s+)?(${NAME}|'[^']+')$`, 'i');
const SOURCE = new RegExp(`^(${NAME})(?:\\s+(?:AS\\s+)?(${NAME}))?$`, 'i');
const CLAUSE_END = /^(WHERE|GROUP|ORDER|LIMIT|HAVING|WINDOW|UNION|EXCEPT|INTERSECT)$/i;
const JOIN_WORDS = /^(LEFT|RIGHT|FULL|INNER|OUTER|CROSS|NATURAL|JOIN)$/i;
const SOURCE_KEYWORDS = /^(ON|USING|WHERE|GROUP|ORDER|LIMIT|HAVING|LEFT|RIGHT|FULL|INNER|OUTER|CROSS|NATURAL|JOIN)$/i;

const unquote = (name: string) => name.replace(/^[`"[']|[`"\]']$/g, '');

/** The query cut at its top-level commas and words: [text, depth-0 offsets of each top-level token]. */
function topLevelWords(sql: string): { word: string; start: number; end: number }[] {
  const out: { word: string; start: number; end: number }[] = [];
  let depth = 0;
  for (let i = 0; i < sql.length; ) {
    const ch = sql[i];
    if (ch === "'" || ch === '"' || ch === '`' || ch === '[') {
      const close = ch === '[' ? ']' : ch;
      let j = i + 1;
      while (j < sql.length && sql[j] !== close) j++;
      if (depth === 0) out.push({ word: sql.slice(i, j + 1), start: i, end: j + 1 });
      i = j + 1;
    } else if (ch === '(') {
      depth++;
      i++;
    } else if (ch === ')') {
      depth--;
      i++;
    } else if (/[A-Za-z_]/.test(ch)) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_$]/.test(sql[j])) j++;
      if (depth === 0) out.push({ word: sql.slice(i, j), start: i, end: j });
      i = j;
    } else if (ch === ',' && depth === 0) {
      out.push({ word: ',', start: i, end: i + 1 });
      i++;
    } else i++;
  }
  return out;
}

/** Splits at top-level commas. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let last = 0;
  for (const t of topLevelWords(text)) {
    if (t.word !== ',') continue;
    parts.push(text.slice(last, t.start));
    last = t.end;
  }
  parts.push(text.slice(last));
  return parts.map((p) => p.trim());
}

/** The select list and the tables (by alias, lower-case) of a plain SELECT; undefined otherwise. */
function readQuery(query: string, lookup: Lookup): { items: string[]; tables: Map<string, Collection>; first?: Collection } | undefined {
  const sql = query.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ');
  let words = topLevelWords(sql);
  // WITH's tables are in parentheses: the main SELECT is the first at the top level.
  if (words[0]?.word.toUpperCase() === 'WITH') words = words.slice(words.findIndex((w) => w.word.toUpperCase() === 'SELECT'));
  if (words[0]?.word.toUpperCase() !== 'SELECT') return undefined;
  if (words.some((w) => /^(UNION|EXCEPT|INTERSECT)$/i.test(w.word))) return undefined;
  const from = words.findIndex((w) => w.word.toUpperCase() === 'FROM');
  if (from < 0) return undefined;
  let listStart = words[0].end;
  if (/^(DISTINCT|ALL)$/i.test(words[1]?.word ?? '')) listStart = words[1].end;
  const items = splitTopLevel(sql.slice(listStart, words[from].start));
  const endWord = words.slice(from + 1).find((w) => CLAUSE_END.test(w.word));
  const fromText = sql.slice(words[from].end, endWord?.start ?? sql.length);
  const tables = new Map<string, Collection>();
  let first: Collection | undefined;
  // Each source: the text between FROM, a comma or a JOIN and the next ON/USING/JOIN/comma.
  const sourceWords = topLevelWords(fromText);
  let start = 0;
  const sources: string[] = [];
  for (const w of [...sourceWords, { word: ',', start: fromText.length, end: fromText.length }]) {
    if (w.word === ',' || SOURCE_KEYWORDS.test(w.word)) {
      const piece = fromText.slice(start, w.start).trim();
      if (piece) sources.push(piece);
      start = w.end;
      // What follows ON/USING up to the next JOIN or comma is a condition, not a source.
      if (/^(ON|USING)$/i.test(w.word)) {
        const next = sourceWords.find((x) => x.start > w.start && (x.word === ',' || JOIN_WORDS.test(x.word)));
        start = next ? next.start : fromText.length;
      }
    }
  }
  for (const [i, piece] of sources.entries()) {
    const m = SOURCE.exec(piece);
    if (!m) continue;
    const collection = lookup(unquote(m[1]));
    if (!collection) continue;
    // An unqualified column is the first source's: none when that is a subquery or a WITH table.
    if (i === 0) first = collection;
    tables.set(unquote(m[2] ?? m[1]).toLowerCase(), collection);
    tables.set(unquote(m[1]).toLowerCase(), collection);
  }
  return { items, tables, first };
}

function relationTo(target: Collection): FieldDef['options'] {
  return fieldType('relation')!.normalizeOptions({ toCollection: target.name, maxSelect: 1 }, new Map());
}

/** The type of a column as PocketBase reads its expression, or undefined to keep the database's. */
function sourceOf(expr: string, tables: Map<string, Collection>, first: Collection | undefined, isId: boolean): Pick<FieldDef, 'type' | 'options'> | undefined {
  const ref = COLUMN_REF.exec(expr);
  if (ref) {
    const table = ref[1] ? tables.get(unquote(ref[1]).toLowerCase()) : first;
    const column = unquote(ref[2]);
    // Read from a subquery or a WITH table: PocketBase does not follow it, json.
    if (!table) return { type: 'json', options: fieldType('json')!.normalizeOptions({}, new Map()) };
    if (column.toLowerCase() === 'id') return isId ? undefined : { type: 'relation', options: relationTo(table) };
    if (column === 'created' || column === 'updated') {
      return { type: 'autodate', options: fieldType('autodate')!.normalizeOptions({ onCreate: true, onUpdate: column === 'updated' }, new Map()) };
    }
    const field = table.fields.find((f) => f.name === column);
    // A bare word that is no field of the table (`FALSE AS sent`, `NULL AS note`) is an expression.
    return field ? { type: field.type, options: { ...field.options } } : { type: 'json', options: fieldType('json')!.normalizeOptions({}, new Map()) };
  }
  if (/^(count|total)\s*\([^()]*\)$/i.test(expr)) return { type: 'number', options: fieldType('number')!.normalizeOptions({}, new Map()) };
  const cast = /^cast\s*\([\s\S]*\bAS\s+(\w+)\s*\)$/i.exec(expr)?.[1]?.toLowerCase();
  if (cast && ['real', 'integer', 'int', 'numeric', 'decimal', 'float', 'double'].includes(cast)) return { type: 'number', options: fieldType('number')!.normalizeOptions({}, new Map()) };
  if (cast && ['bool', 'boolean'].includes(cast)) return { type: 'bool', options: fieldType('bool')!.normalizeOptions({}, new Map()) };
  // Any other expression is json to PocketBase, whatever the engine makes of it (PostgreSQL types
  // `a + b` a number where SQLite gives no type): the same field on both engines.
  return { type: 'json', options: fieldType('json')!.normalizeOptions({}, new Map()) };
}

export function pocketBaseViewFields(query: string, inferred: FieldDef[], lookup: Lookup): FieldDef[] {
  const read = readQuery(query, lookup);
  if (!read) return inferred;
  const byColumn = new Map<string, Pick<FieldDef, 'type' | 'options'>>();
  for (const item of read.items) {
    if (item === '*' || /\.\s*\*$/.test(item)) continue;
    const aliased = AS_ALIAS.exec(item);
    const plain = COLUMN_REF.exec(item);
    const expr = plain ? item : aliased ? aliased[1].trim() : item;
    const column = plain ? unquote(plain[2]) : aliased ? unquote(aliased[2]) : undefined;
    if (!column) continue;
    const typed = sourceOf(expr, read.tables, read.first, column.toLowerCase() === 'id');
    if (typed) byColumn.set(column.toLowerCase(), typed);
  }
  return inferred.map((f) => {
    const typed = byColumn.get(f.name.toLowerCase());
    return typed && fieldType(typed.type) ? { ...f, type: typed.type, options: typed.options } : f;
  });
}
