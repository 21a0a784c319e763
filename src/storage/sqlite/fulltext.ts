import { quoteIdent } from '../../lib/identifiers.ts';
import { raw, sql } from '../sql.ts';
import type { FulltextDialect } from '../types.ts';

/**
 * Full-text search on SQLite: an FTS5 table over the collection's table (external content: the text
 * stays in the collection's table only), kept in step by triggers; matches ranked by bm25.
 */

const tableOf = (collection: string) => `_fts_${collection}`;

/** Every word becomes a quoted phrase, so FTS5 operators and syntax errors cannot come from the
 * input; the words must all match. */
function ftsQuery(words: readonly string[], fields?: readonly string[]): string {
  // A column filter on each phrase: `{a b} : "word"` matches in columns a and b only.
  const filter = fields ? `{${fields.map((f) => `"${f.replace(/"/g, '""')}"`).join(' ')}} : ` : '';
  return words.map((t) => `${filter}"${t.replace(/"/g, '""')}"`).join(' ');
}

export const sqliteFulltext: FulltextDialect = {
  async drop(tx, collection) {
    const table = tableOf(collection);
    for (const suffix of ['ai', 'ad', 'au']) await tx.exec(`DROP TRIGGER IF EXISTS ${quoteIdent(`${table}_${suffix}`)}`);
    await tx.exec(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
  },

  async create(tx, collection, fields, tokenize) {
    const table = quoteIdent(tableOf(collection));
    const source = quoteIdent(collection);
    const cols = fields.map(quoteIdent);
    const tokenizer = tokenize ? `, tokenize='${tokenize}'` : '';
    await tx.exec(`CREATE VIRTUAL TABLE ${table} USING fts5(${cols.join(', ')}, content=${source}, content_rowid='rowid'${tokenizer})`);
    const colList = cols.join(', ');
    const values = (prefix: string) => cols.map((c) => `${prefix}.${c}`).join(', ');
    const trigger = (suffix: string) => quoteIdent(`${tableOf(collection)}_${suffix}`);
    const insertNew = `INSERT INTO ${table}(rowid, ${colList}) VALUES (new.rowid, ${values('new')});`;
    const deleteOld = `INSERT INTO ${table}(${table}, rowid, ${colList}) VALUES ('delete', old.rowid, ${values('old')});`;
    await tx.exec(`CREATE TRIGGER ${trigger('ai')} AFTER INSERT ON ${source} BEGIN ${insertNew} END`);
    await tx.exec(`CREATE TRIGGER ${trigger('ad')} AFTER DELETE ON ${source} BEGIN ${deleteOld} END`);
    await tx.exec(`CREATE TRIGGER ${trigger('au')} AFTER UPDATE ON ${source} BEGIN ${deleteOld} ${insertNew} END`);
    await tx.exec(`INSERT INTO ${table}(${table}) VALUES ('rebuild')`);
  },

  search(alias, collection, words, _tokenize, only) {
    const table = raw(quoteIdent(tableOf(collection)));
    const rowid = raw(`${alias}.rowid`);
    if (only && only.fields.length === 0) return { where: sql`1 = 0`, order: sql`(1 = 0)` };
    const query = ftsQuery(words, only?.fields);
    return {
      where: sql`${rowid} IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ${query})`,
      // bm25 ranks are negative, best first in ascending order.
      order: sql`(SELECT rank FROM ${table} WHERE ${table} MATCH ${query} AND rowid = ${rowid})`,
    };
  },
};
