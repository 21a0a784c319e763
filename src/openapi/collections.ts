import { isMultiSelect } from '../collections/fields/multi.ts';
import type { Collection, FieldDef } from '../collections/model.ts';

/**
 * JSON Schemas (OpenAPI 3.1's dialect) of one collection's records as the API sends and takes them:
 * the record a view or list returns, the body of a create and of an update. `/api/openapi.json` puts
 * them in its components and `cairn typegen` prints them as TypeScript, so both say the same.
 */

export type JsonSchema = { [key: string]: unknown };

export interface CollectionSchemas {
  /** Type names: `Posts` → `PostsRecord`, `PostsCreate`, `PostsUpdate`, `PostsList`. */
  name: string;
  record: JsonSchema;
  create?: JsonSchema;
  update?: JsonSchema;
  /** The same bodies as multipart forms, with the file fields as uploads. */
  createForm?: JsonSchema;
  updateForm?: JsonSchema;
}

const UPLOAD = { type: 'string', contentMediaType: 'application/octet-stream' };

const STRING = { type: 'string' };

/** The value a field holds in a record's JSON. */
export function fieldSchema(field: FieldDef): JsonSchema {
  const multiple = isMultiSelect(field);
  const many = (item: JsonSchema): JsonSchema => (multiple ? { type: 'array', items: item } : item);
  switch (field.type) {
    case 'text':
    case 'editor':
    case 'email':
    case 'url':
      return { ...STRING };
    case 'date':
      return { type: 'string', description: "ISO 8601 UTC, or '' when empty" };
    case 'number':
      return { type: 'number' };
    case 'bool':
      return { type: 'boolean' };
    case 'select': {
      const values = Array.isArray(field.options.values) ? (field.options.values as string[]) : [];
      return multiple ? { type: 'array', items: { type: 'string', enum: values } } : { type: 'string', enum: [...values, ''] };
    }
    case 'relation':
      return many({ type: 'string', description: 'record id' });
    case 'file':
      return many({ type: 'string', description: 'stored file name' });
    case 'json':
      return {};
    default:
      return {};
  }
}

const SYSTEM_PROPERTIES: Record<string, JsonSchema> = {
  id: { type: 'string', pattern: '^[a-z0-9]{15}$' },
  created: { type: 'string' },
  updated: { type: 'string' },
  collectionId: { type: 'string' },
};

/** `posts` → `Posts`, `blog_posts` → `BlogPosts`: a TypeScript-friendly name for the collection's types. */
export function typeNameOf(collection: string): string {
  const name = collection
    .split(/[^A-Za-z0-9]+/)
    .filter((p) => p !== '')
    .map((p) => p[0].toUpperCase() + p.slice(1))
    .join('');
  return /^[A-Za-z]/.test(name) ? name : `C${name}`;
}

/** Distinct type names for every collection (a name two collections would share gets a number). */
export function typeNames(collections: readonly Collection[]): Map<Collection, string> {
  const used = new Set<string>();
  const out = new Map<Collection, string>();
  for (const c of [...collections].sort((a, b) => a.name.localeCompare(b.name))) {
    let name = typeNameOf(c.name);
    for (let i = 2; used.has(name.toLowerCase()); i++) name = `${typeNameOf(c.name)}${i}`;
    used.add(name.toLowerCase());
    out.set(c, name);
  }
  return out;
}

function object(properties: Record<string, JsonSchema>, required: string[], description?: string): JsonSchema {
  return { type: 'object', ...(description ? { description } : {}), properties, required, additionalProperties: false };
}

export function collectionSchemas(collection: Collection, name: string): CollectionSchemas {
  const fields = collection.fields.filter((f) => !f.system);
  const auth = collection.type === 'auth';

  // What a view returns: every field (hidden ones only to administrators, so optional), the system
  // fields, and `expand` when asked for.
  const recordProps: Record<string, JsonSchema> = { ...SYSTEM_PROPERTIES, collectionName: { type: 'string', const: collection.name } };
  const recordRequired = ['id', 'created', 'updated', 'collectionId', 'collectionName'];
  if (auth) {
    recordProps.email = { type: 'string', description: 'shown to the owner, administrators, or everyone when emailVisibility is on' };
    recordProps.emailVisibility = { type: 'boolean' };
    recordProps.verified = { type: 'boolean' };
    recordRequired.push('emailVisibility', 'verified');
  }
  for (const f of fields) {
    recordProps[f.name] = fieldSchema(f);
    if (!f.hidden) recordRequired.push(f.name);
  }
  recordProps.expand = { type: 'object', description: 'related records named by the expand parameter', additionalProperties: true };
  const record = object(recordProps, recordRequired, `A record of the ${collection.type} collection "${collection.name}".`);
  if (collection.type === 'view') return { name, record };

  // Bodies: files are sent as multipart parts, so JSON bodies leave them out.
  const writable = fields.filter((f) => f.type !== 'file');
  const createProps: Record<string, JsonSchema> = { id: { type: 'string', pattern: '^[a-z0-9]{15}$', description: 'optional custom id' } };
  const createRequired: string[] = [];
  const updateProps: Record<string, JsonSchema> = {};
  if (auth) {
    Object.assign(createProps, {
      email: { type: 'string' },
      emailVisibility: { type: 'boolean' },
      password: { type: 'string' },
      passwordConfirm: { type: 'string' },
      verified: { type: 'boolean', description: 'administrators only' },
    });
    createRequired.push('password', 'passwordConfirm');
    Object.assign(updateProps, {
      email: { type: 'string' },
      emailVisibility: { type: 'boolean' },
      oldPassword: { type: 'string', description: 'required to change the password, except for administrators' },
      password: { type: 'string' },
      passwordConfirm: { type: 'string' },
      verified: { type: 'boolean', description: 'administrators only' },
    });
  }
  for (const f of writable) {
    createProps[f.name] = fieldSchema(f);
    updateProps[f.name] = fieldSchema(f);
    if (f.required) createRequired.push(f.name);
  }
  const uploads: Record<string, JsonSchema> = {};
  for (const f of fields.filter((x) => x.type === 'file')) uploads[f.name] = isMultiSelect(f) ? { type: 'array', items: UPLOAD } : UPLOAD;
  const fileRequired = fields.filter((f) => f.type === 'file' && f.required).map((f) => f.name);
  return {
    name,
    record,
    create: object(createProps, createRequired, `The JSON body that creates a record of "${collection.name}" (files go in multipart bodies).`),
    update: object(updateProps, [], `The JSON body that updates a record of "${collection.name}"; every field optional.`),
    createForm: object({ ...createProps, ...uploads }, [...createRequired, ...fileRequired], `The multipart body that creates a record of "${collection.name}".`),
    updateForm: object({ ...updateProps, ...uploads }, [], `The multipart body that updates a record of "${collection.name}".`),
  };
}
