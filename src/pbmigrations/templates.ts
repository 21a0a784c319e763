/**
 * The files `cairn migrate create` and `cairn migrate collections` write, as PocketBase's migratecmd
 * writes them for JavaScript (plugins/migratecmd/templates.go): the ≥ 0.23 form, `migrate((app) => …)`,
 * with the reference line its editors read types from.
 */

const TYPES_DIRECTIVE = '/// <reference path="../pb_data/types.d.ts" />\n';

/** PocketBase's `inflector.Snakecase`: words split at non-word characters, camel humps joined by `_`. */
export function snakecase(name: string): string {
  const words = name.split(/[\W_]+/).filter((w) => w !== '');
  return words.map((w) => w.replace(/(?<=[^A-Z])([A-Z])/g, '_$1')).join('_').toLowerCase();
}

/** `<unix seconds>_<name>.js`, PocketBase's migration file name. */
export function migrationFileName(name: string, now = new Date()): string {
  return `${Math.floor(now.getTime() / 1000)}_${snakecase(name)}.js`;
}

export function blankMigration(): string {
  return `${TYPES_DIRECTIVE}migrate((app) => {
  // add up queries...
}, (app) => {
  // add down queries...
})
`;
}

/** Keys sorted at every level, as Go's encoding/json writes a map. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}

/**
 * A collection's ≥ 0.23 JSON as PocketBase's migration files hold it: without v0.22's `schema` and
 * `options` (the same values again), `created`, `updated` and OAuth2 providers (their secrets stay
 * out of files).
 */
export function migrationJson(json: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...json };
  for (const key of ['schema', 'options', 'created', 'updated']) delete copy[key];
  if (copy.oauth2 && typeof copy.oauth2 === 'object') {
    const oauth2 = { ...(copy.oauth2 as Record<string, unknown>) };
    delete oauth2.providers;
    copy.oauth2 = oauth2;
  }
  return copy;
}

/** A snapshot of `collections` (≥ 0.23's JSON of each) that `app.importCollections` brings back, as PocketBase writes it. */
export function snapshotMigration(collections: ReadonlyArray<Record<string, unknown>>): string {
  const data = collections.map((c) => sortedKeys(migrationJson(c)));
  const json = JSON.stringify(data, null, 2).replace(/\n/g, '\n  ');
  return `${TYPES_DIRECTIVE}migrate((app) => {
  const snapshot = ${json};

  return app.importCollections(snapshot, false);
}, (app) => {
  return null;
})
`;
}

/** A value as a JavaScript literal inside a function body (two spaces in), keys sorted. */
function literal(value: unknown): string {
  return JSON.stringify(sortedKeys(value), null, 2).replace(/\n/g, '\n  ');
}

/**
 * The file automigrate writes for one collection change (`old` undefined: created; `now` undefined:
 * deleted), in the ≥ 0.23 form of PocketBase's JavaScript templates: a created collection is saved
 * from its JSON and deleted again on the way down; a changed one gets the keys that changed
 * (`fields` as a whole list) with `unmarshal`, and their old values on the way down. Undefined when
 * nothing changed.
 */
export function collectionChangeMigration(old: Record<string, unknown> | undefined, now: Record<string, unknown> | undefined): string | undefined {
  const save = (json: Record<string, unknown>) => `  const collection = new Collection(${literal(json)});

  return app.save(collection);`;
  const remove = (json: Record<string, unknown>) => `  const collection = app.findCollectionByNameOrId(${JSON.stringify(json.id)});

  return app.delete(collection);`;
  const body = (up: string, down: string) => `${TYPES_DIRECTIVE}migrate((app) => {
${up}
}, (app) => {
${down}
})
`;
  if (old === undefined && now === undefined) return undefined;
  if (old === undefined) return body(save(now!), remove(now!));
  if (now === undefined) return body(remove(old), save(old));
  const changed = [...new Set([...Object.keys(old), ...Object.keys(now)])]
    .filter((k) => JSON.stringify(sortedKeys(old[k])) !== JSON.stringify(sortedKeys(now[k])))
    .sort();
  if (changed.length === 0) return undefined;
  const values = (json: Record<string, unknown>) => Object.fromEntries(changed.map((k) => [k, json[k] ?? null]));
  const update = (json: Record<string, unknown>) => `  const collection = app.findCollectionByNameOrId(${JSON.stringify(old.id)});

  unmarshal(${literal(values(json))}, collection);

  return app.save(collection);`;
  return body(update(now), update(old));
}
