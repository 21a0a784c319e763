import { quoteIdent } from '../../lib/identifiers.ts';
import { raw, type Sql, sql } from '../sql.ts';
import { postgresFulltext } from './fulltext.ts';
import { pgStrftime, strftimeFunctionsSql } from './strftime.ts';
import { postgreSplitterOptions, splitQuery } from 'dbgate-query-splitter';
import type { ColumnInfo, ColumnKind, Comparable, CompareKind, Dialect, Queryable, StorageErrorKind } from '../types.ts';

/** Schema of the helper functions below (the instance schema; see driver.ts). */
const FN = 'cairn_system';

/**
 * The collation of every text column Cairn makes, ids included: text sorts by code point on every
 * server, as SQLite's BINARY collation does, whatever the database's default collation; and a relation
 * field's value compares with the id it names under one collation, so a join through it can use the
 * key's index (under two, the comparison has none).
 */
const TEXT_COLLATION = '"C"';

const COLUMN_DEFINITIONS: Record<ColumnKind, string> = {
  // Zero values instead of NULL, as on SQLite.
  text: `text COLLATE ${TEXT_COLLATION} DEFAULT '' NOT NULL`,
  citext: `citext DEFAULT '' NOT NULL`,
  number: 'double precision DEFAULT 0 NOT NULL',
  bool: 'boolean DEFAULT FALSE NOT NULL',
  json: 'jsonb DEFAULT NULL',
};

// A parameter typed as a column of each kind is (typedRow).
const TYPED_PARAMS: Record<ColumnKind, string> = {
  text: `CAST(? AS text) COLLATE ${TEXT_COLLATION}`,
  citext: 'CAST(? AS citext)',
  number: 'CAST(? AS double precision)',
  bool: 'CAST(? AS boolean)',
  json: 'CAST(? AS jsonb)',
};

type Target = 'text' | 'number' | 'bool' | 'json';

const CONVERTERS: Record<Target, (v: Sql) => Sql> = {
  text: (v) => sql`${raw(FN)}.txt(${v})`,
  number: (v) => sql`${raw(FN)}.num(${v})`,
  bool: (v) => sql`${raw(FN)}.truth(${v})`,
  json: (v) => v,
};

function targetOf(kind: CompareKind | null | undefined): Target | undefined {
  if (kind === null || kind === undefined) return undefined;
  return kind === 'date' ? 'text' : kind;
}

/**
 * The type two compared values are converted to. Equal kinds compare as they are; JSON values are read
 * as whatever they are compared with; a number beside text compares as a number (text that is not one
 * reads NULL, so the comparison fails instead of the query).
 */
function commonTarget(a: Target | undefined, b: Target | undefined): Target {
  if (a === undefined) return b ?? 'text';
  if (b === undefined || a === b) return a;
  if (a === 'json') return b;
  if (b === 'json') return a;
  if (a === 'number' || b === 'number') return 'number';
  if (a === 'bool' || b === 'bool') return 'bool';
  return 'text';
}

const comparables = new Map<string, Comparable>();

function comparable(left: CompareKind | null | undefined, right: CompareKind | null | undefined): Comparable {
  const key = `${left}|${right}`;
  let c = comparables.get(key);
  if (c === undefined) {
    const target = commonTarget(targetOf(left), targetOf(right));
    const convert = CONVERTERS[target];
    c = { left: convert, right: convert, textual: target === 'text' };
    comparables.set(key, c);
  }
  return c;
}

/** `Key (a, b)=(…) already exists.` → [a, b]; expression keys (`lower(email)`) name their column. */
function uniqueColumns(detail: string | undefined): string[] {
  const m = /^Key \((.+?)\)=\(/.exec(detail ?? '');
  if (!m) return [];
  return m[1].split(',').map((part) => {
    const name = /"?([A-Za-z_][A-Za-z0-9_]*)"?(?:::[a-z ]+)?\)*\s*$/.exec(part.trim());
    return name ? name[1] : part.trim();
  });
}

/** pg_trgm's operator classes: an index of either serves `~` (ILIKE) on the column. */
const TRIGRAM_CLASSES = new Set(['gin_trgm_ops', 'gist_trgm_ops']);

/** The advisory lock of the start's set-up (the driver's), taken by whatever creates an extension. */
export const SETUP_LOCK = 'cairn.setup';

/** The schema an extension was created in (the driver's start asks it of citext, an index of pg_trgm). */
export const EXTENSION_SCHEMA_SQL = 'SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = ?';

const extensionSchema = async (db: Queryable, name: string) => (await db.get<{ nspname: string }>(EXTENSION_SCHEMA_SQL, [name]))?.nspname;

/**
 * The schema of the pg_trgm extension, created (beside citext, which every schema's search_path
 * reaches) the first time an index asks for it. It is one per PostgreSQL database, so the creation
 * takes the lock of the start's set-up: two nodes adding such an index at once do not both create it.
 * A server that does not ship the extension, or a role that may not create it, is the index's 400.
 */
async function trigramSchema(db: Queryable): Promise<string> {
  const found = await extensionSchema(db, 'pg_trgm');
  if (found) return found;
  await db.get('SELECT pg_advisory_xact_lock(hashtext(?))', [SETUP_LOCK]);
  const schema = (await extensionSchema(db, 'pg_trgm')) ?? (await extensionSchema(db, 'citext')) ?? 'public';
  await db.exec(`CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA ${quoteIdent(schema)}`);
  return schema;
}

/** An index statement written for SQLite as PocketBase writes it, in PostgreSQL's spelling. */
function fromSqliteSpelling(statement: string): string {
  // Backticks (SQLite's MySQL-style quoting) become double quotes, outside string literals.
  let out = '';
  let quoted: string | undefined;
  for (const ch of statement) {
    if (quoted) {
      if (ch === quoted) quoted = undefined;
      out += quoted === undefined && ch === '`' ? '"' : ch;
    } else if (ch === "'" || ch === '"' || ch === '`') {
      quoted = ch;
      out += ch === '`' ? '"' : ch;
    } else out += ch;
  }
  // A case-insensitive column (`COLLATE NOCASE`, SQLite's ASCII case folding) is indexed on its
  // lower-case value, so a unique index still refuses "A" beside "a".
  return out.replace(/("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)\s+COLLATE\s+"?nocase"?/gi, 'lower($1)');
}

export const postgresDialect: Dialect = {
  name: 'postgres',

  fulltext: postgresFulltext,

  quoteIdent,

  insertionOrderColumn: { name: '_seq', definition: '"_seq" bigint GENERATED BY DEFAULT AS IDENTITY' },

  columnDefinition(kind, multiple) {
    return multiple ? `jsonb DEFAULT '[]'::jsonb NOT NULL` : COLUMN_DEFINITIONS[kind];
  },

  jsonEach(expr, alias) {
    return `jsonb_array_elements_text(${FN}.jarr(${expr})) AS ${alias}(value)`;
  },

  jsonArrayLength(expr) {
    return `jsonb_array_length(${FN}.jarr(${expr}))`;
  },

  like(left, right, negate) {
    return `${FN}.txt(${left}) ${negate ? 'NOT ILIKE' : 'ILIKE'} ${FN}.txt(${right}) ESCAPE '\\'`;
  },

  wrapInJsonArraySql(table, column) {
    const col = quoteIdent(column);
    // A single value column is text; as a multiple field it becomes a JSON array of that value.
    return `ALTER TABLE ${quoteIdent(table)}
      ALTER COLUMN ${col} DROP DEFAULT,
      ALTER COLUMN ${col} TYPE jsonb USING (CASE WHEN ${col} IS NULL OR ${col}::text = '' THEN '[]'::jsonb
        WHEN ${FN}.jarr(${col}::text) <> '[]'::jsonb OR ${col}::text = '[]' THEN ${col}::text::jsonb ELSE jsonb_build_array(${col}) END),
      ALTER COLUMN ${col} SET DEFAULT '[]'::jsonb,
      ALTER COLUMN ${col} SET NOT NULL`;
  },

  typedRow(columns) {
    return `SELECT ${columns.map((c) => `${c.multiple ? TYPED_PARAMS.json : TYPED_PARAMS[c.kind]} AS ${quoteIdent(c.name)}`).join(', ')}`;
  },

  comparable,

  distinct(left, right) {
    return sql`${left} IS DISTINCT FROM ${right}`;
  },

  isEmpty(value, negate) {
    return sql`COALESCE(${raw(FN)}.txt(${value}), '') ${raw(negate ? '!=' : '=')} ''`;
  },

  asText(value) {
    return sql`${raw(FN)}.txt(${value})`;
  },

  strftime(format, time, modifiers) {
    return pgStrftime(FN, format, time, modifiers);
  },

  lower(value) {
    return sql`LOWER(${raw(FN)}.txt(${value}))`;
  },

  jsonPath(column, keys) {
    // Keys are checked names ([A-Za-z0-9_-]); jarr-like guard: a non-JSON column reads as NULL.
    return sql`(${raw(FN)}.jval(${column}) #> ${raw(`'{${keys.join(',')}}'`)})`;
  },

  orderBy(value, descending, nullable) {
    // PostgreSQL puts NULLs last in ascending order; only nullable values say so, since an explicit
    // NULLS clause on a NOT NULL column would keep its index from serving the order.
    if (!nullable) return descending ? sql`${value} DESC` : sql`${value} ASC`;
    return descending ? sql`${value} DESC NULLS LAST` : sql`${value} ASC NULLS FIRST`;
  },

  createUnloggedTable: 'CREATE UNLOGGED TABLE',

  changeNoticeSql(table) {
    const t = quoteIdent(table);
    return [
      `DROP TRIGGER IF EXISTS "_cairn_changes" ON ${t}`,
      `CREATE TRIGGER "_cairn_changes" AFTER INSERT OR UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION ${FN}.notify_change()`,
    ];
  },

  bigintPrimaryKey() {
    return 'BIGINT PRIMARY KEY';
  },

  randomOrder() {
    return 'RANDOM()';
  },

  lockForWrite(alias) {
    return ` FOR UPDATE OF ${alias}`;
  },
  lockForUpdate(alias) {
    return ` FOR NO KEY UPDATE OF ${alias}`;
  },
  lockToReference() {
    return ' FOR KEY SHARE';
  },
  insertionOrder(alias) {
    return `${alias}."_seq"`;
  },

  indexMethods: ['btree', 'hash', 'gin', 'gist', 'spgist', 'brin'],

  async indexStatement(db, statement, operatorClasses) {
    const translated = fromSqliteSpelling(statement);
    if (!operatorClasses.some((c) => TRIGRAM_CLASSES.has(c))) return translated;
    const schema = await trigramSchema(db);
    // Named with their schema: the extension may live where a search_path does not reach. Only where
    // a column's operator class stands (before a comma, the list's end or its order).
    return translated.replace(/(?<=\s)(gin|gist)_trgm_ops(?=\s*(?:[,)]|(?:ASC|DESC|NULLS)\b))/gi, (c) => `${quoteIdent(schema)}.${c.toLowerCase()}`);
  },

  splitStatements(script: string): string[] {
    return (splitQuery(script, postgreSplitterOptions) as unknown[]).map((s) => (typeof s === 'string' ? s : String((s as { text: string }).text)).trim()).filter(Boolean);
  },

  describeError(err: unknown): string {
    const e = err as { message?: string; code?: string; severity?: string };
    return e?.code ? `${e.severity ?? 'ERROR'}: ${e.message} (SQLSTATE ${e.code})` : String(e?.message ?? err);
  },

  classifyError(err: unknown): StorageErrorKind {
    const e = err as { code?: unknown; table?: string; detail?: string };
    if (e?.code === '23505') return { kind: 'unique', table: e.table, columns: uniqueColumns(e.detail) };
    if (e?.code === '40001' || e?.code === '40P01' || e?.code === '55P03') return { kind: 'busy' };
    return { kind: 'other' };
  },

  async tableColumns(db: Queryable, table: string): Promise<ColumnInfo[]> {
    return db.all<ColumnInfo>(
      `SELECT column_name AS name, data_type AS type FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ? AND column_name NOT LIKE '\\_%' ORDER BY ordinal_position`,
      [table],
    );
  },

  async tableExists(db: Queryable, table: string): Promise<boolean> {
    const row = await db.get(
      "SELECT 1 AS found FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = ? AND c.relkind IN ('r', 'v', 'm', 'p')",
      [table],
    );
    return row !== undefined;
  },

  async relationKind(db: Queryable, name: string): Promise<'table' | 'view' | undefined> {
    const row = await db.get<{ relkind: string }>(
      "SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = ? AND c.relkind IN ('r', 'p', 'v', 'm')",
      [name],
    );
    if (!row) return undefined;
    return row.relkind === 'v' || row.relkind === 'm' ? 'view' : 'table';
  },

  // In TEXT_COLLATION, as the relation fields that hold ids: under the database's default (another
  // collation, even where it is C.UTF-8) every post's author was looked up by a scan of the users.
  idColumn: `id text COLLATE ${TEXT_COLLATION} PRIMARY KEY NOT NULL`,

  async alignIdColumn(db: Queryable, table: string): Promise<void> {
    // Booleans read as 1 and 0 (as on SQLite).
    const row = await db.get<{ aligned: number }>(
      `SELECT a.attcollation = 'pg_catalog.${TEXT_COLLATION}'::regcollation AS aligned FROM pg_attribute a
        WHERE a.attrelid = to_regclass(quote_ident(?)) AND a.attname = 'id' AND a.atttypid = 'text'::regtype AND NOT a.attisdropped`,
      [table],
    );
    if (!row || row.aligned) return;
    // No table rewrite (the type stays text), but the key's index is built again.
    const views = await postgresDialect.viewsReading(db, table);
    for (const v of [...views].reverse()) await db.exec(`DROP VIEW IF EXISTS ${quoteIdent(v.schema)}.${quoteIdent(v.name)}`);
    await db.exec(`ALTER TABLE ${quoteIdent(table)} ALTER COLUMN id TYPE text COLLATE ${TEXT_COLLATION}`);
    for (const v of views) await db.exec(`CREATE VIEW ${quoteIdent(v.schema)}.${quoteIdent(v.name)} AS ${v.sql.trim().replace(/;$/, '')}`);
  },

  viewsReading(db: Queryable, relation: string): Promise<Array<{ schema: string; name: string; sql: string }>> {
    return db.all(
      `WITH RECURSIVE deps(oid, depth) AS (
         SELECT r.ev_class, 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
          WHERE d.refobjid = to_regclass(quote_ident(?)) AND r.ev_class <> d.refobjid
         UNION
         SELECT r.ev_class, deps.depth + 1 FROM deps JOIN pg_depend d ON d.refobjid = deps.oid JOIN pg_rewrite r ON r.oid = d.objid
          WHERE r.ev_class <> d.refobjid AND deps.depth < 32)
       SELECT n.nspname AS schema, c.relname AS name, pg_get_viewdef(c.oid) AS sql
         FROM deps JOIN pg_class c ON c.oid = deps.oid JOIN pg_namespace n ON n.oid = c.relnamespace
        GROUP BY c.oid, n.nspname, c.relname ORDER BY max(deps.depth)`,
      [relation],
    );
  },

  async foreignSchemasOf(db: Queryable, view: string): Promise<string[]> {
    // Relations the view's rewrite rule depends on, outside the view's own schema.
    const rows = await db.all<{ nspname: string }>(
      `SELECT DISTINCT n.nspname FROM pg_rewrite r
        JOIN pg_class v ON v.oid = r.ev_class JOIN pg_namespace vn ON vn.oid = v.relnamespace
        JOIN pg_depend d ON d.objid = r.oid AND d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
        JOIN pg_class c ON c.oid = d.refobjid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE vn.nspname = current_schema() AND v.relname = ? AND n.nspname <> current_schema()
          AND NOT (n.nspname = '${FN}' AND c.relname = '_superusers')`,
      [view],
    );
    return rows.map((r) => r.nspname);
  },

  // The view of `_admins` in the instance schema (superusersViewStep).
  superusersRelation: `${FN}._superusers`,

  async indexTable(db: Queryable, index: string): Promise<string | undefined> {
    const row = await db.get<{ tablename: string }>('SELECT tablename FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?', [index]);
    return row?.tablename;
  },
};

/**
 * The functions the SQL above calls, created once per PostgreSQL database in the instance schema.
 * They convert between the types a filter compares (text, number, boolean, JSON) the forgiving way
 * SQLite does: a value that is not of the wanted type reads as NULL instead of failing the query. Each
 * is a one-expression SQL function, which PostgreSQL inlines, so a column compared with a value of its
 * own type still uses its index.
 */
export function helperFunctionsSql(extensionSchema: string): string {
  const citext = `${quoteIdent(extensionSchema)}.citext`;
  const fn = (signature: string, returns: string, body: string) =>
    `CREATE OR REPLACE FUNCTION ${FN}.${signature} RETURNS ${returns} LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$ SELECT ${body} $fn$;`;
  const NUMBER = `'^\\s*[-+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?\\s*$'`;
  return [
    fn('num(text)', 'double precision', `CASE WHEN $1 ~ ${NUMBER} THEN $1::double precision END`),
    fn('num(double precision)', 'double precision', '$1'),
    fn('num(boolean)', 'double precision', 'CASE WHEN $1 THEN 1 WHEN NOT $1 THEN 0 END'),
    fn(
      'num(jsonb)',
      'double precision',
      `CASE jsonb_typeof($1) WHEN 'number' THEN ($1)::double precision WHEN 'string' THEN ${FN}.num($1 #>> '{}') WHEN 'boolean' THEN ${FN}.num(($1)::boolean) END`,
    ),
    fn('truth(boolean)', 'boolean', '$1'),
    fn('truth(text)', 'boolean', `CASE lower($1) WHEN 'true' THEN TRUE WHEN '1' THEN TRUE WHEN 'false' THEN FALSE WHEN '0' THEN FALSE END`),
    fn('truth(double precision)', 'boolean', '$1 <> 0'),
    fn('truth(jsonb)', 'boolean', `CASE jsonb_typeof($1) WHEN 'boolean' THEN ($1)::boolean WHEN 'number' THEN ($1)::double precision <> 0 WHEN 'string' THEN ${FN}.truth($1 #>> '{}') END`),
    fn('txt(text)', 'text', '$1'),
    fn(`txt(${citext})`, citext, '$1'),
    fn('txt(double precision)', 'text', '$1::text'),
    fn('txt(boolean)', 'text', `CASE WHEN $1 THEN 'true' WHEN NOT $1 THEN 'false' END`),
    fn('txt(jsonb)', 'text', `$1 #>> '{}'`),
    fn('jval(jsonb)', 'jsonb', '$1'),
    // Text that is not JSON (an adopted column, a parameter) reads as NULL rather than failing.
    `CREATE OR REPLACE FUNCTION ${FN}.jval(text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fn$
      BEGIN RETURN $1::jsonb; EXCEPTION WHEN others THEN RETURN NULL; END $fn$;`,
    fn('jarr(jsonb)', 'jsonb', `CASE WHEN jsonb_typeof($1) = 'array' THEN $1 ELSE '[]'::jsonb END`),
    fn('jarr(text)', 'jsonb', `${FN}.jarr(${FN}.jval($1))`),
    ...strftimeFunctionsSql(FN),
    // Row changes of collection tables, announced on commit to every node (the realtime feed,
    // src/realtime/postgres-feed.ts). A delete carries the row as it was, without secrets; one too
    // big for a notice (8000 bytes) is kept in _realtime_deletes and the notice names it.
    // A notice is only for the realtime clients of other nodes (a node hands its own changes to its
    // clients itself, and skips its own notices), and one costs every committing writer: PostgreSQL
    // queues notices under one lock, so writers that notify commit one at a time (10 clients
    // inserting made a third as many inserts a second with it as without). So none is sent while no
    // other node lists a client in _realtime_clients, where a client is listed before its id goes
    // out. A write with no node of its own (psql, another program) counts every listed client.
    `CREATE TABLE IF NOT EXISTS ${FN}._realtime_deletes (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, payload TEXT NOT NULL, created BIGINT NOT NULL);`,
    `CREATE OR REPLACE FUNCTION ${FN}.notify_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE payload text; ref bigint; me text := coalesce(current_setting('cairn.node', true), '');
      BEGIN
        -- Two probes of the node index: clients of nodes ordered before this one, or after it.
        IF NOT (EXISTS (SELECT 1 FROM ${FN}._realtime_clients c WHERE c.node < me) OR EXISTS (SELECT 1 FROM ${FN}._realtime_clients c WHERE c.node > me)) THEN
          RETURN NULL;
        END IF;
        IF TG_OP = 'DELETE' THEN
          payload := json_build_object('n', current_setting('cairn.node', true), 's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'a', 'delete', 'r', OLD.id,
            'x', to_jsonb(OLD) - 'passwordHash' - 'tokenKey' - '_seq' - '_fts')::text;
          IF octet_length(payload) > 7900 THEN
            INSERT INTO ${FN}._realtime_deletes (payload, created) VALUES (payload, (extract(epoch FROM clock_timestamp()) * 1000)::bigint) RETURNING id INTO ref;
            payload := json_build_object('n', current_setting('cairn.node', true), 's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'a', 'delete', 'r', OLD.id, 'ref', ref)::text;
          END IF;
        ELSE
          payload := json_build_object('n', current_setting('cairn.node', true), 's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'a', CASE TG_OP WHEN 'INSERT' THEN 'create' ELSE 'update' END, 'r', NEW.id)::text;
        END IF;
        PERFORM pg_notify('cairn_records', payload);
        RETURN NULL;
      END $fn$;`,
  ].join('\n');
}
