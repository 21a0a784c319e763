import { boolField } from '../collections/fields/bool.ts';
import { textField } from '../collections/fields/text.ts';
import type { FieldType } from '../collections/fields/types.ts';
import type { FieldDef } from '../collections/model.ts';
import { pbDate } from '../lib/time.ts';
import type { Row } from '../storage/index.ts';
import type { RecordShape } from './shape.ts';
import type { Viewer } from './serialize.ts';

/** A record's JSON text, made straight from its row for one kind of viewer. */
export type Renderer = (row: Row, viewer: Viewer) => string;

/**
 * The JSON text `JSON.stringify(serializeRecord(row, shape, viewer))` gives, written as one function
 * generated for the collection version's shape (as fast-json-stringify does from a schema): the keys
 * and their order (the shape's, PocketBase's) are constants in it, each value is converted as its field type's `fromDb` does
 * and encoded, and no record object is built. Hidden fields are left out of the `public` renderer;
 * an auth collection's email is shown by the row's `emailVisibility` or the viewer (`own`).
 * `test/records/render.test.ts` holds it to `serializeRecord` for every field type.
 */
function generate(shape: RecordShape, privileged: boolean): Renderer {
  const c = shape.collection;
  const fromDb: Array<FieldType['fromDb']> = [];
  const defs: FieldDef[] = [];
  let code = `let s = '{';\n`;
  // Whether a key written here is the first of the object: known (`yes`, `no`) or, after a key that
  // may be left out (a view's `created`, an email the viewer may not see), only known from `s`.
  let first: 'yes' | 'no' | 'maybe' = 'yes';
  const put = (key: string, value: string, when?: string) => {
    const name = JSON.stringify(`${JSON.stringify(key)}:`);
    const head = first === 'maybe' ? `(s.length > 1 ? ',' : '') + ${name}` : JSON.stringify(`${first === 'yes' ? '' : ','}${JSON.stringify(key)}:`);
    code += when === undefined ? `s += ${head} + ${value};\n` : `if (${when}) s += ${head} + ${value};\n`;
    first = when === undefined ? 'no' : first === 'no' ? 'no' : 'maybe';
  };
  for (const { key, field: f } of shape.order) {
    if (f) {
      if (f.field.hidden && !privileged) continue;
      const value = `row[${JSON.stringify(f.name)}]`;
      if (f.type.fromDb === textField.fromDb && !f.date) {
        put(key, `(v = ${value}, q(v === null || v === undefined ? '' : String(v)))`);
      } else if (f.type.fromDb === boolField.fromDb) {
        put(key, `(v = ${value}, v === 1 || v === true || v === '1' || v === 'true' ? 'true' : 'false')`);
      } else {
        const i = fromDb.push(f.type.fromDb) - 1;
        defs.push(f.field);
        put(key, f.date ? `q(pbDate(fromDb[${i}](${value}, defs[${i}])))` : `q(fromDb[${i}](${value}, defs[${i}]))`);
      }
      continue;
    }
    switch (key) {
      case 'id':
        put(key, 'q(row.id)');
        break;
      case 'collectionId':
        put(key, JSON.stringify(JSON.stringify(c.id)));
        break;
      case 'collectionName':
        put(key, JSON.stringify(JSON.stringify(c.name)));
        break;
      case 'created':
      case 'updated':
        // As serializeRecord: a view record has `created` and `updated` only when its query selects them.
        put(key, `q(pbDate(row.${key}))`, c.type === 'view' ? `row.${key} !== '' && row.${key} != null` : undefined);
        break;
      case 'email': {
        const shows = privileged ? undefined : `row.emailVisibility === 1 || row.emailVisibility === true || (viewer.authRecordId === row.id && viewer.authCollectionId === ${JSON.stringify(c.id)}) || (viewer.managed !== undefined && viewer.managed.has(row.id))`;
        put(key, `q(row.email ?? '')`, shows);
        break;
      }
      case 'emailVisibility':
        put(key, `(row.emailVisibility === 1 || row.emailVisibility === true ? 'true' : 'false')`);
        break;
      case 'verified':
        put(key, `(row.verified === 1 || row.verified === true ? 'true' : 'false')`);
        break;
      default:
        // `expand`: never in an answer rendered straight from rows.
        break;
    }
  }
  code += `return s + '}';`;
  const make = new Function('q', 'fromDb', 'defs', 'pbDate', `return function render(row, viewer) {\nlet v;\n${code}\n};`) as (q: typeof JSON.stringify, f: typeof fromDb, d: FieldDef[], p: typeof pbDate) => Renderer;
  return make(JSON.stringify, fromDb, defs, pbDate);
}

const renderers = new WeakMap<RecordShape, { privileged?: Renderer; public?: Renderer }>();

/** The renderer of a shape for a viewer (administrators' and everyone else's are two functions). */
export function rendererOf(shape: RecordShape, viewer: Viewer): Renderer {
  let pair = renderers.get(shape);
  if (!pair) renderers.set(shape, (pair = {}));
  return viewer.privileged ? (pair.privileged ??= generate(shape, true)) : (pair.public ??= generate(shape, false));
}
