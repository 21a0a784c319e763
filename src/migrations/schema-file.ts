import { createRequire } from 'node:module';
import type { Document, LineCounter, Node } from 'yaml';
import type * as Yaml from 'yaml';
import { FIELD_OPTION_KEYS, fieldInput } from '../collections/pocketbase-shapes.ts';
import { ApiError } from '../errors.ts';
import { isValidCollectionName, isValidDatabaseName, isValidName } from '../lib/identifiers.ts';
import {
  type CollectionOps,
  type CreateTableSpec,
  type FieldSpec,
  type FtsConfig,
  type IndexSpec,
  type Migration,
  OPERATIONS,
  RULE_KEYS,
  type RulesSpec,
  type ViewSpec,
} from './model.ts';
import { isVersion } from './versions.ts';
import { viewSqlProblem } from './views.ts';

let yamlModule: typeof Yaml | undefined;

/** The yaml library (some 5 MB resident), loaded with the first migration read or written rather than
 * at start; synchronously, from its CommonJS build, as the parsing here is synchronous. */
function yaml(): typeof Yaml {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yamlModule;
}

/**
 * Migration files: YAML text ↔ `Migration`. Parsing checks the structure (keys, types, the eleven
 * operations) and reports every problem with its line and column; whether the operations fit a
 * database's schema is checked when the migration is applied.
 */

type Path = (string | number)[];

const TOP_KEYS = ['version', 'name', 'created_at', 'description', 'databases'];
// A column's options nested in `options` (PocketBase v0.22) or as keys of the column (v0.23).
const FIELD_KEYS = ['id', 'name', 'type', 'required', 'unique', 'hidden', 'system', 'presentable', 'default', 'options', ...FIELD_OPTION_KEYS];
const MAX_NAME = 100;
const MAX_SQL = 10_000;

class Problem extends Error {
  constructor(
    readonly path: Path,
    message: string,
    /** The problem is with a key itself (unknown key), not its value. */
    readonly atKey = false,
  ) {
    super(message);
  }
}

interface Position {
  line: number;
  column: number;
}

type Locator = (path: Path, atKey: boolean) => Position | undefined;

/** Builds the 400 answer for an invalid file; `field` is the request property the file came in. */
function invalidMigration(message: string, path: Path, position: Position | undefined, field: string): ApiError {
  const where = position ? ` at line ${position.line}, column ${position.column}` : '';
  const at = path.length > 0 ? ` (${path.join('.')})` : '';
  const full = `Invalid migration file${where}${at}: ${message}`;
  return new ApiError(400, full, {
    [field]: { code: 'validation_invalid_migration', message: full, ...(position ?? {}), path: path.join('.') },
  });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  // YAML tags (!!binary, !!set, !!omap) make other kinds of objects; a migration has only mappings.
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function map(value: unknown, path: Path, what: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw new Problem(path, `${what} must be a mapping.`);
  return value;
}

function list(value: unknown, path: Path, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Problem(path, `${what} must be a list.`);
  return value;
}

function text(value: unknown, path: Path, what: string, max = MAX_NAME): string {
  if (typeof value !== 'string' || value.trim() === '') throw new Problem(path, `${what} must be a non-empty string.`);
  if (value.length > max) throw new Problem(path, `${what} must be at most ${max} characters.`);
  return value;
}

function identifier(value: unknown, path: Path, what: string): string {
  if (!isValidName(value)) throw new Problem(path, `${what} must start with a letter and contain only letters, digits and underscores (max 63).`);
  return value;
}

function bool(value: unknown, path: Path, what: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new Problem(path, `${what} must be true or false.`);
  return value;
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], path: Path, what: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new Problem([...path, key], `unknown ${what} "${key}"; use ${allowed.join(', ')}.`, true);
  }
}

function names(value: unknown, path: Path, what: string): string[] {
  return list(value, path, what).map((v, i) => identifier(v, [...path, i], `Each entry of ${what}`));
}

function fieldSpec(value: unknown, path: Path): FieldSpec {
  const raw = map(value, path, 'A column definition');
  onlyKeys(raw, FIELD_KEYS, path, 'column property');
  const spec: FieldSpec = { name: identifier(raw.name, [...path, 'name'], 'The column name'), type: text(raw.type, [...path, 'type'], 'The column type') };
  if (raw.id !== undefined && raw.id !== null) spec.id = text(raw.id, [...path, 'id'], 'The column id');
  for (const flag of ['required', 'unique', 'hidden', 'system', 'presentable'] as const) {
    const v = bool(raw[flag], [...path, flag], `"${flag}"`);
    if (v !== undefined) spec[flag] = v;
  }
  if (raw.default !== undefined) spec.default = raw.default;
  if (raw.options !== undefined && raw.options !== null) spec.options = map(raw.options, [...path, 'options'], 'The column options');
  if (FIELD_OPTION_KEYS.some((k) => raw[k] !== undefined)) spec.options = fieldInput({ ...raw, options: spec.options }).options as Record<string, unknown>;
  return spec;
}

function fieldSpecs(value: unknown, path: Path, what: string): FieldSpec[] {
  return list(value, path, what).map((v, i) => fieldSpec(v, [...path, i]));
}

function createTable(value: unknown, path: Path): CreateTableSpec {
  const raw = map(value, path, 'create_table');
  onlyKeys(raw, ['name', 'type', 'schema', 'fields', 'system'], path, 'create_table property');
  const type = raw.type ?? 'base';
  if (type !== 'base' && type !== 'auth') throw new Problem([...path, 'type'], 'The type must be "base" or "auth" (views are created with create_views).');
  const schemaKey = raw.schema !== undefined ? 'schema' : 'fields';
  const spec: CreateTableSpec = {
    name: identifier(raw.name, [...path, 'name'], 'The table name'),
    type,
    schema: raw[schemaKey] === undefined || raw[schemaKey] === null ? [] : fieldSpecs(raw[schemaKey], [...path, schemaKey], schemaKey),
  };
  const system = bool(raw.system, [...path, 'system'], '"system"');
  if (system !== undefined) spec.system = system;
  return spec;
}

function namedSql(value: unknown, path: Path, what: string): { name: string; sql: string }[] {
  return list(value, path, what).map((v, i) => {
    const p = [...path, i];
    const raw = map(v, p, `Each entry of ${what}`);
    onlyKeys(raw, ['name', 'sql'], p, `${what} property`);
    const name = identifier(raw.name, [...p, 'name'], 'The name');
    if (!isValidCollectionName(name)) throw new Problem([...p, 'name'], 'Names starting with "sqlite_" or "pg_" are reserved by the databases.');
    return { name, sql: text(raw.sql, [...p, 'sql'], 'The SQL', MAX_SQL) };
  });
}

function fts(value: unknown, path: Path): FtsConfig {
  const raw = map(value, path, 'create_fts');
  onlyKeys(raw, ['fields', 'tokenize'], path, 'create_fts property');
  const fields = names(raw.fields, [...path, 'fields'], 'fields');
  if (fields.length === 0) throw new Problem([...path, 'fields'], 'Name at least one field to index.');
  const config: FtsConfig = { fields };
  if (raw.tokenize !== undefined && raw.tokenize !== null) config.tokenize = text(raw.tokenize, [...path, 'tokenize'], 'tokenize');
  return config;
}

function rules(value: unknown, path: Path): RulesSpec {
  const raw = map(value, path, 'update_rules');
  onlyKeys(raw, RULE_KEYS, path, 'rule');
  const out: RulesSpec = {};
  for (const key of RULE_KEYS) {
    if (!(key in raw)) continue;
    const v = raw[key];
    if (v !== null && typeof v !== 'string') throw new Problem([...path, key], 'A rule must be null (administrators only), "" (everyone) or a filter expression.');
    out[key] = v;
  }
  return out;
}

function collectionOps(value: unknown, path: Path): CollectionOps {
  if (value === null || value === undefined) return {};
  const raw = map(value, path, 'The operations of a collection');
  onlyKeys(raw, OPERATIONS, path, 'operation');
  const ops: CollectionOps = {};
  for (const [op, v] of Object.entries(raw)) {
    const p = [...path, op];
    switch (op) {
      case 'create_table':
        ops.create_table = createTable(v, p);
        break;
      case 'drop_table':
      case 'drop_fts':
        if (typeof v !== 'boolean') throw new Problem(p, `${op} must be true or false.`);
        if (v) ops[op] = true;
        break;
      case 'add_columns':
        ops.add_columns = fieldSpecs(v, p, op);
        break;
      case 'drop_columns':
      case 'drop_indexes':
      case 'drop_views':
        ops[op] = names(v, p, op);
        break;
      case 'add_indexes':
        ops.add_indexes = namedSql(v, p, op) as IndexSpec[];
        break;
      case 'create_views':
        ops.create_views = namedSql(v, p, op) as ViewSpec[];
        ops.create_views.forEach((view, i) => {
          const problem = viewSqlProblem(view.sql);
          if (problem !== undefined) throw new Problem([...p, i, 'sql'], `The SQL ${problem}`);
        });
        break;
      case 'create_fts':
        ops.create_fts = fts(v, p);
        break;
      case 'update_rules':
        ops.update_rules = rules(v, p);
        break;
    }
  }
  return ops;
}

function databases(value: unknown, path: Path): Migration['databases'] {
  const raw = map(value ?? {}, path, 'databases');
  const out: Migration['databases'] = {};
  for (const [db, entry] of Object.entries(raw)) {
    const p = [...path, db];
    if (!isValidDatabaseName(db)) throw new Problem(p, `"${db}" is not a valid database name (^[a-z][a-z0-9_]{0,62}$).`, true);
    const dbRaw = map(entry ?? {}, p, 'A database entry');
    onlyKeys(dbRaw, ['collections'], p, 'database property');
    const collections = map(dbRaw.collections ?? {}, [...p, 'collections'], 'collections');
    const ops: Record<string, CollectionOps> = {};
    for (const [name, v] of Object.entries(collections)) {
      const cp = [...p, 'collections', name];
      if (!isValidCollectionName(name)) throw new Problem(cp, `"${name}" is not a valid collection name (letters, digits and underscores, not "sqlite_…" or "pg_…").`, true);
      ops[name] = collectionOps(v, cp);
    }
    out[db] = { collections: ops };
  }
  return out;
}

/** Checks a migration given as data (a parsed file or a JSON body). `version` may be absent when allowed. */
function readMigration(value: unknown, requireVersion: boolean): Migration {
  const raw = map(value, [], 'A migration');
  onlyKeys(raw, TOP_KEYS, [], 'top-level key');
  let version = '';
  if (raw.version !== undefined && raw.version !== null) {
    if (typeof raw.version !== 'string' || !isVersion(raw.version)) {
      throw new Problem(['version'], 'The version must be a string of the form YYYYMMDD_HHMMSS_mmm (UTC).');
    }
    version = raw.version;
  } else if (requireVersion) {
    throw new Problem(['version'], 'The version is missing; an uploaded migration must carry its own (YYYYMMDD_HHMMSS_mmm, UTC).');
  }
  const migration: Migration = {
    version,
    name: text(raw.name, ['name'], 'The name'),
    created_at: raw.created_at === undefined || raw.created_at === null ? '' : text(raw.created_at, ['created_at'], 'created_at'),
    databases: databases(raw.databases, ['databases']),
  };
  if (raw.description !== undefined && raw.description !== null && raw.description !== '') {
    migration.description = text(raw.description, ['description'], 'The description', 10_000);
  }
  return migration;
}

function locatorFor(doc: Document, counter: LineCounter): Locator {
  return (path, atKey) => {
    let node: unknown = doc.contents;
    let found: Node | undefined = doc.contents ?? undefined;
    for (let i = 0; i < path.length; i++) {
      const last = i === path.length - 1;
      if (yaml().isMap(node)) {
        const pair = node.items.find((p) => (yaml().isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(path[i]));
        if (!pair) break;
        if (last && atKey && yaml().isScalar(pair.key)) {
          found = pair.key;
          break;
        }
        if (yaml().isScalar(pair.key)) found = pair.key;
        node = pair.value;
      } else if (yaml().isSeq(node)) {
        node = node.items[Number(path[i])];
      } else {
        break;
      }
      if (node && typeof node === 'object' && 'range' in node && (node as Node).range) found = node as Node;
    }
    if (!found?.range) return undefined;
    const pos = counter.linePos(found.range[0]);
    return { line: pos.line, column: pos.col };
  };
}

/** The yaml library reports absurdly nested input as the stack overflow it caused; say what it means. */
function yamlMessage(message: string): string {
  return message.includes('Maximum call stack size exceeded') ? TOO_DEEP : message;
}

const TOO_DEEP = 'The document is nested too deeply';

/** Deeper than any migration goes, and far from where composing a document runs out of stack. */
const MAX_NESTING = 200;

/**
 * Where the text's collections first nest deeper than `MAX_NESTING`, read from the yaml library's
 * syntax tree (its parser keeps a stack of its own; composing the document then recurses). A stack
 * overflow while composing is caught by the library, but in a server the next one could leave V8's
 * regular-expression compiler without memory and end the process, so such a text is never composed.
 */
function tooDeepAt(text: string): number | undefined {
  type CstNode = { offset?: number; value?: unknown; items?: { key?: unknown; value?: unknown }[] };
  for (const token of new (yaml().Parser)().parse(text)) {
    const stack: [CstNode, number][] = [[token as CstNode, 0]];
    while (stack.length > 0) {
      const [node, depth] = stack.pop()!;
      if (depth > MAX_NESTING) return node.offset ?? 0;
      const push = (child: unknown) => {
        if (child && typeof child === 'object') stack.push([child as CstNode, depth + 1]);
      };
      push(node.value);
      for (const item of node.items ?? []) {
        push(item.key);
        push(item.value);
      }
    }
  }
  return undefined;
}

export interface ParsedFile {
  migration: Migration;
  /** The document, kept to write a version into the text without losing comments. */
  document: Document;
}

/**
 * Parses the YAML text of a migration file. Throws a 400 that gives the line and column of the
 * first problem. `field` names the request property the text came in, for the error's `data`.
 */
export function parseMigrationText(textIn: string, options: { requireVersion?: boolean; field?: string } = {}): ParsedFile {
  const field = options.field ?? 'yaml';
  const counter = new (yaml().LineCounter)();
  const deep = tooDeepAt(textIn);
  if (deep !== undefined) {
    const before = textIn.slice(0, deep);
    throw invalidMigration(`${TOO_DEEP}.`, [], { line: before.split('\n').length, column: deep - before.lastIndexOf('\n') }, field);
  }
  const document = yaml().parseDocument(textIn, { lineCounter: counter, prettyErrors: true, uniqueKeys: true });
  const first = document.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    const message = yamlMessage(first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, ''));
    throw invalidMigration(`${message}.`.replace(/\.\.$/, '.'), [], pos ? { line: pos.line, column: pos.col } : undefined, field);
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // Aliases that would expand enormously (a "billion laughs" document).
    throw invalidMigration(`${yamlMessage((err as Error).message)}.`, [], undefined, field);
  }
  try {
    return { migration: readMigration(value, options.requireVersion ?? false), document };
  } catch (err) {
    if (err instanceof Problem) throw invalidMigration(err.message, err.path, locatorFor(document, counter)(err.path, err.atKey), field);
    throw err;
  }
}

/** Checks a migration sent as JSON (`POST /api/migrations/save {name, description, databases}`). */
export function parseMigrationData(value: unknown, field = 'databases'): Migration {
  try {
    return readMigration(value, false);
  } catch (err) {
    if (err instanceof Problem) throw invalidMigration(err.message, err.path, undefined, field);
    throw err;
  }
}

/** The YAML text of a migration, keys in the order of the spec's file format. */
export function migrationToYaml(m: Migration): string {
  const doc = { version: m.version, name: m.name, created_at: m.created_at, description: m.description, databases: m.databases };
  return yaml().stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Sets the version of a parsed file, keeping its comments and layout. */
export function withVersion(parsed: ParsedFile, version: string): string {
  parsed.document.set('version', version);
  return parsed.document.toString({ lineWidth: 0 });
}
