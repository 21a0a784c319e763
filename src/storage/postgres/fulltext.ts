import { quoteIdent } from '../../lib/identifiers.ts';
import { raw, sql } from '../sql.ts';
import type { FulltextDialect } from '../types.ts';

/**
 * Full-text search on PostgreSQL: a generated `tsvector` column (`_fts`) over the indexed fields, with
 * a GIN index, kept in step by PostgreSQL itself; matches ranked by ts_rank. FTS5 tokenizer settings
 * choose the text search configuration: one naming `porter` stems English words (`english`), any
 * other keeps words as written (`simple`).
 */

const COLUMN = '"_fts"';

function configOf(tokenize: string | undefined): string {
  return tokenize && /\bporter\b/i.test(tokenize) ? 'english' : 'simple';
}

export const postgresFulltext: FulltextDialect = {
  async drop(tx, collection) {
    await tx.exec(`ALTER TABLE IF EXISTS ${quoteIdent(collection)} DROP COLUMN IF EXISTS ${COLUMN}`);
  },

  async create(tx, collection, fields, tokenize) {
    const config = configOf(tokenize);
    // txt() reads text, numbers and JSON alike (a multiple select is a JSON array).
    const text = fields.map((f) => `coalesce(cairn_system.txt(${quoteIdent(f)}), '')`).join(` || ' ' || `);
    const table = quoteIdent(collection);
    await tx.exec(`ALTER TABLE ${table} ADD COLUMN ${COLUMN} tsvector GENERATED ALWAYS AS (to_tsvector('${config}'::regconfig, ${text})) STORED`);
    await tx.exec(`CREATE INDEX ${quoteIdent(`_fts_${collection}`)} ON ${table} USING GIN (${COLUMN})`);
  },

  search(alias, _collection, words, tokenize, only) {
    const config = raw(`'${configOf(tokenize)}'::regconfig`);
    // plainto_tsquery takes plain words (no operators from the input) and requires all of them.
    const query = sql`plainto_tsquery(${config}, ${words.join(' ')})`;
    if (only && only.fields.length === 0) return { where: sql`1 = 0`, order: sql`(1 = 0)` };
    // Over some of the indexed fields only: the vector of those, made per row (the stored one mixes
    // every field; no index helps, which only callers kept from hidden fields pay).
    const column = only
      ? raw(`to_tsvector('${configOf(tokenize)}'::regconfig, ${only.fields.map((f) => `coalesce(cairn_system.txt(${alias}.${quoteIdent(f)}), '')`).join(` || ' ' || `)})`)
      : raw(`${alias}.${COLUMN}`);
    return {
      where: sql`${column} @@ ${query}`,
      order: sql`ts_rank(${column}, ${query}) DESC`,
    };
  },
};
