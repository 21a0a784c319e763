import type { Collection } from './model.ts';

/** A collection as the API returns it (API contract §4): `fields` and `schema` carry the same array. */
export function collectionJson(c: Collection): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    system: c.system,
    fields: c.fields,
    schema: c.fields,
    options: c.options,
    listRule: c.listRule,
    viewRule: c.viewRule,
    createRule: c.createRule,
    updateRule: c.updateRule,
    deleteRule: c.deleteRule,
    indexes: c.indexes,
    created: c.created,
    updated: c.updated,
  };
}
