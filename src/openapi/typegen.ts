import type { Collection } from '../collections/model.ts';
import { collectionSchemas, type JsonSchema, typeNames } from './collections.ts';

/**
 * `cairn typegen`: TypeScript types of a database's collections, printed from the same JSON Schemas as
 * `/api/openapi.json` — per collection a record type (`PostsRecord`), a create type (`PostsCreate`) and
 * an update type (`PostsUpdate`) — and a `TypedPocketBase` for the PocketBase JavaScript SDK, whose
 * `collection('posts')` then returns a `RecordService<PostsRecord>` (as pocketbase-typegen does).
 */

function quote(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key);
}

/** The TypeScript type of the subset of JSON Schema that collections.ts produces. */
export function tsType(schema: JsonSchema, indent = ''): string {
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.length === 0 ? 'never' : schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array': {
      const item = tsType((schema.items as JsonSchema | undefined) ?? {}, indent);
      return /^[\w"]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object': {
      const props = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const inner = `${indent}  `;
      const lines = Object.entries(props).map(([key, value]) => {
        const doc = typeof value.description === 'string' ? `${inner}/** ${value.description.replace(/\*\//g, '* /')} */\n` : '';
        return `${doc}${inner}${quote(key)}${required.has(key) ? '' : '?'}: ${tsType(value, inner)};`;
      });
      if (schema.additionalProperties === true) lines.push(`${inner}[key: string]: unknown;`);
      return lines.length === 0 ? 'Record<string, never>' : `{\n${lines.join('\n')}\n${indent}}`;
    }
    default:
      return 'unknown';
  }
}

export interface TypegenOptions {
  /** What the types describe, named in the header: a database, or the export file they were read from. */
  database?: string;
  from?: string;
  /**
   * Whether to type application hooks too: a `declare module 'cairn'` that fills its
   * `CollectionRecords`, so `e.record` is typed by collection name in handlers. Only where the
   * `cairn` package resolves (TypeScript refuses to augment a module it cannot find).
   */
  hooks?: boolean;
}

export function generateTypes(collections: readonly Collection[], options: TypegenOptions): string {
  const names = typeNames(collections);
  const sorted = [...collections].sort((a, b) => a.name.localeCompare(b.name));
  const out: string[] = [
    '/**',
    ` * Types of the collections of ${options.from ? `the PocketBase export "${options.from}"` : `the Cairn database "${options.database}"`}, written by \`cairn typegen\`.`,
    ' * Regenerate them after changing the collections; do not edit by hand.',
    ' */',
    '',
    "import type PocketBase from 'pocketbase';",
    "import type { RecordService } from 'pocketbase';",
    '',
  ];
  const records: string[] = [];
  for (const c of sorted) {
    const name = names.get(c)!;
    const s = collectionSchemas(c, name);
    out.push(`/** A record of "${c.name}" (${c.type} collection), as a view or a list returns it. */`);
    out.push(`export type ${name}Record = ${tsType(s.record)};`, '');
    if (s.create) {
      out.push(`/** The JSON body that creates a record of "${c.name}". */`);
      out.push(`export type ${name}Create = ${tsType(s.create)};`, '');
    }
    if (s.update) {
      out.push(`/** The JSON body that updates a record of "${c.name}". */`);
      out.push(`export type ${name}Update = ${tsType(s.update)};`, '');
    }
    records.push(`  ${quote(c.name)}: ${name}Record;`);
  }
  out.push('/** Record types by collection name. */');
  out.push(records.length > 0 ? `export type CollectionRecords = {\n${records.join('\n')}\n};` : 'export type CollectionRecords = Record<string, never>;', '');
  out.push('/** The PocketBase SDK, typed: `pb.collection("posts")` returns a `RecordService<PostsRecord>`. */');
  out.push('export interface TypedPocketBase extends PocketBase {');
  for (const c of sorted) out.push(`  collection(idOrName: ${JSON.stringify(c.name)}): RecordService<${names.get(c)}Record>;`);
  out.push('  collection(idOrName: string): RecordService;', '}', '');
  if (options.hooks) {
    out.push("/** Types `e.record` by collection name in Cairn's hooks: `app.onRecordCreate((e) => e.record.title, 'posts')`. */");
    out.push("declare module 'cairn' {");
    out.push('  interface CollectionRecords {');
    for (const c of sorted) out.push(`    ${quote(c.name)}: ${names.get(c)}Record;`);
    out.push('  }', '}', '');
  }
  return out.join('\n');
}
