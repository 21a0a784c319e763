import { type Sql, sql, raw } from '../storage/sql.ts';
import type { Dialect } from '../storage/types.ts';
import type { Resolver } from './compile.ts';
import { FilterError } from './errors.ts';

const SORT_TERM = /^([+-]?)([A-Za-z_@][A-Za-z0-9_.:@]*)$/;
export const MAX_SORT_TERMS = 16;

/**
 * Compiles a PocketBase sort expression (`-created,title,author.name,@random`) into ORDER BY terms.
 * Fields resolve through the same resolver as filters, so the same names are allowed. `@rowid` sorts
 * in insertion order: the dialect's, or the given column's for a table ordered by its own key.
 */
export function compileSort(text: string, resolver: Resolver, dialect: Dialect, rootAlias: string, insertionOrder = dialect.insertionOrder(rootAlias)): Sql[] {
  const terms: Sql[] = [];
  let position = 0;
  for (const part of text.split(',')) {
    const trimmed = part.trim();
    const at = position + part.indexOf(trimmed);
    position += part.length + 1;
    if (trimmed === '') continue;
    const m = SORT_TERM.exec(trimmed);
    if (!m) throw new FilterError(`invalid sort term ${JSON.stringify(trimmed)}`, at);
    const descending = m[1] === '-';
    const direction = raw(descending ? 'DESC' : 'ASC');
    const name = m[2];
    if (name === '@random') {
      terms.push(sql`${raw(dialect.randomOrder())}`);
    } else if (name === '@rowid') {
      terms.push(sql`${raw(insertionOrder)} ${direction}`);
    } else if (name.startsWith('@')) {
      // Request values and other collections are one value for every record: nothing to sort by.
      // Resolved first all the same, so a caller who may not name them at all is told so (403).
      if (name.startsWith('@request') || name.startsWith('@collection')) resolver.resolve(name, at);
      throw new FilterError(`cannot sort by ${JSON.stringify(name)}`, at);
    } else {
      const operand = resolver.resolve(name, at);
      if (operand.kind !== 'scalar' || operand.every !== undefined) {
        throw new FilterError(`cannot sort by ${JSON.stringify(name)}: multiple-value fields and paths have several values per record`, at);
      }
      terms.push(dialect.orderBy(operand.sql, descending, operand.nullable === true));
    }
    if (terms.length > MAX_SORT_TERMS) throw new FilterError(`more than ${MAX_SORT_TERMS} sort terms`, at);
  }
  return terms;
}
