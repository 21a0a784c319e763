import type { Collection } from '../collections/model.ts';
import type { RequestContext } from '../context.ts';
import { badRequest } from '../errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import type { SearchProvider } from '../records/deps.ts';
import { ROOT_ALIAS } from '../records/shape.ts';
import { type Queryable, raw, type SchemaStep, sql } from '../storage/index.ts';
import type { FtsConfig } from './model.ts';

/**
 * Full-text search (`create_fts`): an FTS5 table over a collection's table, kept in sync by
 * triggers, and the `search=` condition of record lists. Which collections have one, with which
 * fields, is recorded in `_fulltext`; the FTS5 table itself is derived data, dropped and rebuilt freely.
 */

export const fulltextTableStep: SchemaStep = {
  id: 'migrations.fulltext',
  async up(tx) {
    await tx.exec(`CREATE TABLE _fulltext (collection ${tx.dialect.columnDefinition('citext', false)} PRIMARY KEY, fields JSON NOT NULL, tokenize TEXT)`);
  },
};

/** Tokenizer settings are written into SQL text, so only plain words and numbers pass (e.g. `porter unicode61`, `trigram`). */
const TOKENIZE = /^[A-Za-z0-9_ ]{1,100}$/;
const MAX_TERMS = 32;
const MAX_SEARCH_LENGTH = 1000;

export function isValidTokenize(value: string): boolean {
  return TOKENIZE.test(value);
}

/** Field types whose values are worth indexing as text. */
export const SEARCHABLE_TYPES = new Set(['text', 'editor', 'email', 'url', 'select']);

function ftsTable(collection: string): string {
  return `_fts_${collection}`;
}

export async function readFulltext(db: Queryable): Promise<Record<string, FtsConfig>> {
  const rows = await db.all<{ collection: string; fields: string; tokenize: string | null }>('SELECT collection, fields, tokenize FROM _fulltext ORDER BY collection');
  const out: Record<string, FtsConfig> = {};
  for (const row of rows) out[row.collection] = { fields: JSON.parse(row.fields), ...(row.tokenize ? { tokenize: row.tokenize } : {}) };
  return out;
}

/** Removes a collection's FTS table, its triggers and its `_fulltext` row. */
export async function dropFulltext(tx: Queryable, collection: string): Promise<void> {
  const table = ftsTable(collection);
  for (const suffix of ['ai', 'ad', 'au']) await tx.exec(`DROP TRIGGER IF EXISTS ${quoteIdent(`${table}_${suffix}`)}`);
  await tx.exec(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
  await tx.run('DELETE FROM _fulltext WHERE collection = ?', [collection]);
}

/**
 * Creates the FTS5 table of a collection (external content: the text stays in the collection's table
 * only), the triggers that keep it in step with every insert, update and delete, and indexes the
 * rows already there. Names were checked against the collection's fields by the caller.
 */
export async function createFulltext(tx: Queryable, collection: string, config: FtsConfig): Promise<void> {
  // Left behind when the collection was deleted through the collections API: replaced, as derived data.
  await dropFulltext(tx, collection);
  const table = quoteIdent(ftsTable(collection));
  const source = quoteIdent(collection);
  const cols = config.fields.map(quoteIdent);
  const tokenize = config.tokenize ? `, tokenize='${config.tokenize}'` : '';
  await tx.exec(`CREATE VIRTUAL TABLE ${table} USING fts5(${cols.join(', ')}, content=${source}, content_rowid='rowid'${tokenize})`);
  const colList = cols.join(', ');
  const values = (prefix: string) => cols.map((c) => `${prefix}.${c}`).join(', ');
  const trigger = (suffix: string) => quoteIdent(`${ftsTable(collection)}_${suffix}`);
  const insertNew = `INSERT INTO ${table}(rowid, ${colList}) VALUES (new.rowid, ${values('new')});`;
  const deleteOld = `INSERT INTO ${table}(${table}, rowid, ${colList}) VALUES ('delete', old.rowid, ${values('old')});`;
  await tx.exec(`CREATE TRIGGER ${trigger('ai')} AFTER INSERT ON ${source} BEGIN ${insertNew} END`);
  await tx.exec(`CREATE TRIGGER ${trigger('ad')} AFTER DELETE ON ${source} BEGIN ${deleteOld} END`);
  await tx.exec(`CREATE TRIGGER ${trigger('au')} AFTER UPDATE ON ${source} BEGIN ${deleteOld} ${insertNew} END`);
  await tx.exec(`INSERT INTO ${table}(${table}) VALUES ('rebuild')`);
  await tx.run('INSERT INTO _fulltext (collection, fields, tokenize) VALUES (?, ?, ?)', [collection, JSON.stringify(config.fields), config.tokenize ?? null]);
}

/**
 * Turns what a user typed into an FTS5 query: every word becomes a quoted phrase, so FTS5 operators
 * and syntax errors cannot come from the input; the words must all match.
 */
export function ftsQuery(terms: string): string {
  return terms
    .split(/\s+/)
    .filter((t) => t !== '')
    .slice(0, MAX_TERMS)
    .map((t) => `"${t.replace(/"/g, '""')}"`)
    .join(' ');
}

/** The `search=` condition of record lists: matching rows, ranked by bm25 (best first). */
export const fulltextSearch: SearchProvider = async (ctx: RequestContext, collection: Collection, terms: string) => {
  if (terms.length > MAX_SEARCH_LENGTH) {
    throw badRequest(`The search parameter must be at most ${MAX_SEARCH_LENGTH} characters.`, {
      search: { code: 'validation_max_text_constraint', message: `At most ${MAX_SEARCH_LENGTH} characters.` },
    });
  }
  const found = await ctx.db.get('SELECT 1 AS found FROM _fulltext WHERE collection = ?', [collection.name]);
  if (!found) {
    throw badRequest(`"${collection.name}" has no full-text index; add one with the create_fts migration operation.`, {
      search: { code: 'validation_no_fulltext_index', message: 'This collection has no full-text index.' },
    });
  }
  const query = ftsQuery(terms);
  if (query === '') return undefined;
  const table = raw(quoteIdent(ftsTable(collection.name)));
  const rowid = raw(`${ROOT_ALIAS}.rowid`);
  return {
    where: sql`${rowid} IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ${query})`,
    order: sql`(SELECT rank FROM ${table} WHERE ${table} MATCH ${query} AND rowid = ${rowid})`,
  };
};
