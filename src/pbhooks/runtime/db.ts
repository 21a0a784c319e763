/**
 * `$app.db()`: dbx's queries (`newQuery`, `select(…)…`, `insert`, `update`, `delete`) and
 * `$app.recordQuery(collection)`, run by the host as SQL with named parameters (`call('sql', …)`).
 */
import { collectionOf } from './collection.ts';
import { $dbx, bindInto, built, DbxExp, ph, quoteName } from './dbx.ts';
import { fill } from './models.ts';
import type { Realm } from './realm.ts';
import type { RecordClass } from './record.ts';

export function dbApi(rt: Realm, Record: RecordClass) {
  const call = rt.call;
  class Query {
    _sql: string;
    _params: any = {};
    constructor(sql: string) {
      this._sql = sql;
    }
    bind(params: any) {
      bindInto(this._params, params);
      return this;
    }
    execute() {
      return call('sql', this._sql, this._params, 'execute');
    }
    all(out: any) {
      const rows = call('sql', this._sql, this._params, 'all') as any[];
      const model = out?.__model;
      if (Array.isArray(out)) {
        out.length = 0;
        for (const row of rows) out.push(model ? fill(model, row) : row);
        return out;
      }
      return rows;
    }
    one(out: any) {
      const rows = call('sql', this._sql, this._params, 'one') as any[];
      if (rows.length === 0) throw new Error('sql: no rows in result set');
      if (out && typeof out === 'object') Object.assign(out, fill(out, rows[0]));
      return out;
    }
    column(out?: any) {
      const rows = call('sql', this._sql, this._params, 'all') as any[];
      const vals = rows.map((r) => Object.values(r)[0]);
      if (Array.isArray(out)) {
        out.length = 0;
        out.push(...vals);
        return out;
      }
      return vals;
    }
    row(...outs: any[]) {
      const rows = call('sql', this._sql, this._params, 'one') as any[];
      return rows[0] ? Object.values(rows[0]) : outs;
    }
  }
  /** `$app.db().select(…)`: dbx's SelectQuery. */
  class SelectQuery {
    _cols: string[] = [];
    _distinct = false;
    _from: string[] = [];
    _joins: { kind: string; table: string; on: any }[] = [];
    _where: any = null;
    _group: string[] = [];
    _having: any = null;
    _order: string[] = [];
    _limit = -1;
    _offset = -1;
    _params: any = {};
    constructor(cols: any[]) {
      this._cols = cols.flat().map(String);
    }
    select(...cols: any[]) {
      this._cols = cols.flat().map(String);
      return this;
    }
    andSelect(...cols: any[]) {
      this._cols.push(...cols.flat().map(String));
      return this;
    }
    distinct(on = true) {
      this._distinct = !!on;
      return this;
    }
    from(...tables: any[]) {
      this._from = tables.flat().map(String);
      return this;
    }
    where(e: any) {
      this._where = e;
      return this;
    }
    andWhere(e: any) {
      this._where = this._where ? $dbx.and(this._where, e) : e;
      return this;
    }
    orWhere(e: any) {
      this._where = this._where ? $dbx.or(this._where, e) : e;
      return this;
    }
    join(kind: string, table: string, on: any) {
      this._joins.push({ kind: String(kind), table: String(table), on });
      return this;
    }
    innerJoin(table: string, on: any) {
      return this.join('INNER JOIN', table, on);
    }
    leftJoin(table: string, on: any) {
      return this.join('LEFT JOIN', table, on);
    }
    rightJoin(table: string, on: any) {
      return this.join('RIGHT JOIN', table, on);
    }
    groupBy(...cols: any[]) {
      this._group = cols.flat().map(String);
      return this;
    }
    andGroupBy(...cols: any[]) {
      this._group.push(...cols.flat().map(String));
      return this;
    }
    having(e: any) {
      this._having = e;
      return this;
    }
    andHaving(e: any) {
      this._having = this._having ? $dbx.and(this._having, e) : e;
      return this;
    }
    orHaving(e: any) {
      this._having = this._having ? $dbx.or(this._having, e) : e;
      return this;
    }
    orderBy(...cols: any[]) {
      this._order = cols.flat().map(String);
      return this;
    }
    andOrderBy(...cols: any[]) {
      this._order.push(...cols.flat().map(String));
      return this;
    }
    limit(n: number) {
      this._limit = Number(n);
      return this;
    }
    offset(n: number) {
      this._offset = Number(n);
      return this;
    }
    bind(params: any) {
      bindInto(this._params, params);
      return this;
    }
    andBind(params: any) {
      return this.bind(params);
    }
    /** The SQL and its values (dbx's Build()), as a Query. */
    build() {
      const params: any = {};
      const cols = this._cols.length ? this._cols.map(quoteName).join(', ') : '*';
      let text = `SELECT ${this._distinct ? 'DISTINCT ' : ''}${cols}`;
      if (this._from.length) text += ` FROM ${this._from.map(quoteName).join(', ')}`;
      for (const j of this._joins) {
        const on = built(j.on, params);
        text += ` ${j.kind} ${quoteName(j.table)}${on ? ` ON ${on}` : ''}`;
      }
      const where = built(this._where, params);
      if (where) text += ` WHERE ${where}`;
      if (this._group.length) text += ` GROUP BY ${this._group.map(quoteName).join(', ')}`;
      const having = built(this._having, params);
      if (having) text += ` HAVING ${having}`;
      if (this._order.length)
        text += ` ORDER BY ${this._order
          .map((o) => {
            const m = /^(.*?)\s+(asc|desc)$/i.exec(o.trim());
            return m ? `${quoteName(m[1])} ${m[2].toUpperCase()}` : quoteName(o);
          })
          .join(', ')}`;
      if (this._limit >= 0) text += ` LIMIT ${Math.trunc(this._limit)}`;
      if (this._offset > 0) text += `${this._limit >= 0 ? '' : ' LIMIT 9223372036854775807'} OFFSET ${Math.trunc(this._offset)}`;
      return new Query(text).bind({ ...params, ...this._params });
    }
    all(out?: any) {
      return this.build().all(out);
    }
    one(out?: any) {
      return this.build().one(out);
    }
    column(out?: any) {
      return this.build().column(out);
    }
    row(...outs: any[]) {
      return this.build().row(...outs);
    }
  }
  /**
   * `$app.recordQuery(collection)`: dbx's SelectQuery over the collection's table (`SELECT t.* FROM t`)
   * whose `all`/`one` into Records give records as `findRecordsByFilter` does: the query selects the
   * matching ids and the main thread reads those records (one crossing), in the query's order.
   */
  class RecordQuery extends SelectQuery {
    _coll: any;
    constructor(coll: any) {
      const c = collectionOf(coll);
      super([`${c.name}.*`]);
      this._coll = c;
      this._from = [c.name];
    }
    /** The records the query matches, in its order. */
    __records(limit?: number): any[] {
      const cols = this._cols;
      const lim = this._limit;
      this._cols = [`${this._coll.name}.id`];
      if (limit !== undefined && (lim < 0 || lim > limit)) this._limit = limit;
      let q: any;
      try {
        q = this.build();
      } finally {
        this._cols = cols;
        this._limit = lim;
      }
      return (call('recordsBySql', this._coll.name, q._sql, q._params) as any[]).map((json) => Record.__from(json));
    }
    override all(out?: any) {
      // Into anything else than Records (arrayOf(new DynamicModel(…))), rows as the builder gives them.
      const model = Array.isArray(out) ? (out as any).__model : undefined;
      if (model !== undefined && !(model instanceof Record)) return super.all(out);
      const records = this.__records();
      if (!Array.isArray(out)) return records;
      out.length = 0;
      out.push(...records);
      return out;
    }
    override one(out?: any) {
      if (out !== undefined && out !== null && !(out instanceof Record)) return super.one(out);
      const [found] = this.__records(1);
      if (!found) throw new Error('sql: no rows in result set');
      if (!out) return found;
      out._c = found._c;
      out._d = {};
      out.__refresh({ ...found._d, expand: found._expand });
      return out;
    }
  }
  const db: any = {
    newQuery: (sql: string) => new Query(sql),
    select: (...cols: any[]) => new SelectQuery(cols),
    insert: (table: string, cols: any) => {
      const params: any = {};
      const keys = Object.keys(cols ?? {});
      return new Query(`INSERT INTO ${quoteName(table)} (${keys.map(quoteName).join(', ')}) VALUES (${keys.map((k) => (cols[k] instanceof DbxExp ? cols[k].build(params) : ph(params, cols[k]))).join(', ')})`).bind(params);
    },
    update: (table: string, cols: any, where?: any) => {
      const params: any = {};
      const sets = Object.keys(cols ?? {}).map((k) => `${quoteName(k)}=${cols[k] instanceof DbxExp ? cols[k].build(params) : ph(params, cols[k])}`);
      const w = built(where, params);
      return new Query(`UPDATE ${quoteName(table)} SET ${sets.join(', ')}${w ? ` WHERE ${w}` : ''}`).bind(params);
    },
    delete: (table: string, where?: any) => {
      const params: any = {};
      const w = built(where, params);
      return new Query(`DELETE FROM ${quoteName(table)}${w ? ` WHERE ${w}` : ''}`).bind(params);
    },
    // dbx's TruncateTable, as it builds it for SQLite: every row deleted (inside the transaction, on both engines).
    truncateTable: (table: string) => new Query(`DELETE FROM ${quoteName(table)}`),
  };
  return { db, Query, SelectQuery, RecordQuery };
}
