import type { Collection } from '../collections/model.ts';
import { isPrivileged, type RequestContext } from '../context.ts';
import { badRequest } from '../errors.ts';
import type { SearchProvider } from '../records/deps.ts';
import { ROOT_ALIAS } from '../records/shape.ts';
import type { Queryable, SchemaStep } from '../storage/index.ts';
import type { FtsConfig } from './model.ts';

/**
 * Full-text search (`create_fts`) and the `search=` condition of record lists. Which collections have
 * an index, over which fields, is recorded in `_fulltext`; the index itself is the driver's
 * (`Dialect.fulltext`) and is derived data, dropped and rebuilt freely.
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

export async function readFulltext(db: Queryable): Promise<Record<string, FtsConfig>> {
  const rows = await db.all<{ collection: string; fields: string; tokenize: string | null }>('SELECT collection, fields, tokenize FROM _fulltext ORDER BY collection');
  const out: Record<string, FtsConfig> = {};
  for (const row of rows) out[row.collection] = { fields: JSON.parse(row.fields), ...(row.tokenize ? { tokenize: row.tokenize } : {}) };
  return out;
}

/** Removes a collection's full-text index and its `_fulltext` row. */
export async function dropFulltext(tx: Queryable, collection: string): Promise<void> {
  await tx.dialect.fulltext.drop(tx, collection);
  await tx.run('DELETE FROM _fulltext WHERE collection = ?', [collection]);
}

/**
 * Creates the full-text index of a collection (the driver's own: FTS5 on SQLite, a tsvector column on
 * PostgreSQL) over rows already there. Names were checked against the collection's fields by the caller.
 */
export async function createFulltext(tx: Queryable, collection: string, config: FtsConfig): Promise<void> {
  // Left behind when the collection was deleted through the collections API: replaced, as derived data.
  await dropFulltext(tx, collection);
  await tx.dialect.fulltext.create(tx, collection, config.fields, config.tokenize);
  await tx.run('INSERT INTO _fulltext (collection, fields, tokenize) VALUES (?, ?, ?)', [collection, JSON.stringify(config.fields), config.tokenize ?? null]);
}

/**
 * The words of a search, at most MAX_TERMS. Control characters separate words as spaces do: a NUL
 * ends SQLite's full-text query text early, and PostgreSQL refuses it in text.
 */
export function searchWords(terms: string): string[] {
  return terms
    .split(/[\s\p{Cc}]+/u)
    .filter((t) => t !== '')
    .slice(0, MAX_TERMS);
}

/** The `search=` condition of record lists: matching rows, best first. */
export const fulltextSearch: SearchProvider = async (ctx: RequestContext, collection: Collection, terms: string) => {
  if (terms.length > MAX_SEARCH_LENGTH) {
    throw badRequest(`The search parameter must be at most ${MAX_SEARCH_LENGTH} characters.`, {
      search: { code: 'validation_max_text_constraint', message: `At most ${MAX_SEARCH_LENGTH} characters.` },
    });
  }
  const found = await ctx.db.get<{ tokenize: string | null; fields: unknown }>('SELECT tokenize, fields FROM _fulltext WHERE collection = ?', [collection.name]);
  if (!found) {
    throw badRequest(`"${collection.name}" has no full-text index; add one with the create_fts migration operation.`, {
      search: { code: 'validation_no_fulltext_index', message: 'This collection has no full-text index.' },
    });
  }
  const words = searchWords(terms);
  if (words.length === 0) return undefined;
  // Search reads only what the caller may filter by (API contract §20): hidden fields are matched for
  // administrators alone, or `search=<a guess>` would tell a guest whether a hidden value is right.
  const indexed = (typeof found.fields === 'string' ? JSON.parse(found.fields) : found.fields) as string[];
  const hidden = new Set(collection.fields.filter((f) => f.hidden).map((f) => f.name));
  const only = !isPrivileged(ctx.auth) && indexed.some((f) => hidden.has(f)) ? { fields: indexed.filter((f) => !hidden.has(f)), indexed } : undefined;
  return ctx.db.dialect.fulltext.search(ROOT_ALIAS, collection.name, words, found.tokenize ?? undefined, only);
};
