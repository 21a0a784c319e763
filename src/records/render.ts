import { boolField } from '../collections/fields/bool.ts';
import { textField } from '../collections/fields/text.ts';
import type { FieldType } from '../collections/fields/types.ts';
import type { FieldDef } from '../collections/model.ts';
import type { Row } from '../storage/index.ts';
import type { RecordShape } from './shape.ts';
import type { Viewer } from './serialize.ts';

/** A record's JSON text, made straight from its row for one kind of viewer. */
export type Renderer = (row: Row, viewer: Viewer) => string;

/**
 * The JSON text `JSON.stringify(serializeRecord(row, shape, viewer))` gives, written as one function
 * generated for the collection version's shape (as fast-json-stringify does from a schema): the keys
 * and their order are constants in it, each value is converted as its field type's `fromDb` does
 * and encoded, and no record object is built. Hidden fields are left out of the `public` renderer;
 * an auth collection's email is shown by the row's `emailVisibility` or the viewer (`own`).
 * `test/records/render.test.ts` holds it to `serializeRecord` for every field type.
 */
function generate(shape: RecordShape, privileged: boolean): Renderer {
  const c = shape.collection;
  const fromDb: Array<FieldType['fromDb']> = [];
  const defs: FieldDef[] = [];
  let code =
    c.type === 'view'
      ? // As serializeRecord: a view record has `created` and `updated` only when its query selects them.
        `let s = '{"id":' + q(row.id) + ${JSON.stringify(`,"collectionId":${JSON.stringify(c.id)},"collectionName":${JSON.stringify(c.name)}`)};\n` +
        `if (row.created !== '' && row.created != null) s += ',"created":' + q(row.created);\n` +
        `if (row.updated !== '' && row.updated != null) s += ',"updated":' + q(row.updated);\n`
      : `let s = '{"id":' + q(row.id) + ${JSON.stringify(`,"collectionId":${JSON.stringify(c.id)},"collectionName":${JSON.stringify(c.name)},"created":`)} + q(row.created) + ',"updated":' + q(row.updated);\n`;
  if (c.type === 'auth') {
    code += `const visible = row.emailVisibility === 1 || row.emailVisibility === true;\n`;
    const shows = privileged ? 'true' : `visible || (viewer.authRecordId === row.id && viewer.authCollectionId === ${JSON.stringify(c.id)}) || (viewer.managed !== undefined && viewer.managed.has(row.id))`;
    code += `if (${shows}) s += ',"email":' + q(row.email ?? '');\n`;
    code += `s += ',"emailVisibility":' + (visible ? 'true' : 'false') + ',"verified":' + (row.verified === 1 || row.verified === true ? 'true' : 'false');\n`;
  }
  for (const f of shape.fields) {
    if (f.field.hidden && !privileged) continue;
    const key = `,${JSON.stringify(f.name)}:`;
    const value = `row[${JSON.stringify(f.name)}]`;
    if (f.type.fromDb === textField.fromDb) {
      code += `{ const v = ${value}; s += ${JSON.stringify(key)} + q(v === null || v === undefined ? '' : String(v)); }\n`;
    } else if (f.type.fromDb === boolField.fromDb) {
      code += `{ const v = ${value}; s += ${JSON.stringify(key)} + (v === 1 || v === true || v === '1' || v === 'true' ? 'true' : 'false'); }\n`;
    } else {
      const i = fromDb.push(f.type.fromDb) - 1;
      defs.push(f.field);
      code += `s += ${JSON.stringify(key)} + q(fromDb[${i}](${value}, defs[${i}]));\n`;
    }
  }
  code += `return s + '}';`;
  const make = new Function('q', 'fromDb', 'defs', `return function render(row, viewer) {\n${code}\n};`) as (q: typeof JSON.stringify, f: typeof fromDb, d: FieldDef[]) => Renderer;
  return make(JSON.stringify, fromDb, defs);
}

const renderers = new WeakMap<RecordShape, { privileged?: Renderer; public?: Renderer }>();

/** The renderer of a shape for a viewer (administrators' and everyone else's are two functions). */
export function rendererOf(shape: RecordShape, viewer: Viewer): Renderer {
  let pair = renderers.get(shape);
  if (!pair) renderers.set(shape, (pair = {}));
  return viewer.privileged ? (pair.privileged ??= generate(shape, true)) : (pair.public ??= generate(shape, false));
}
