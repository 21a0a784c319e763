import assert from 'node:assert/strict';
import type { InstanceSchema } from '../../src/migrations/model.ts';
import type { TestServer } from '../helpers/server.ts';

/** Saves a migration given as data or YAML text and returns its version. */
export async function saveMigration(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const res = await server.admin('POST', '/api/migrations/save', { body });
  assert.equal(res.status, 200, res.text);
  return res.body.version;
}

export async function apply(server: TestServer, version: string) {
  return server.admin('POST', `/api/migrations/${version}/apply`);
}

export async function statusOf(server: TestServer, version: string): Promise<string | undefined> {
  const res = await server.admin('GET', '/api/migrations');
  return res.body.items.find((i: { version: string }) => i.version === version)?.status;
}

/** What an instance's schema means, without per-instance ids and timestamps: equal on two instances
 * that ran the same migrations. */
export function schemaMeaning(schema: InstanceSchema) {
  return Object.fromEntries(
    Object.entries(schema)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([db, s]) => [
        db,
        {
          fts: s.fts,
          collections: s.collections
            .map((c) => ({
              name: c.name,
              type: c.type,
              system: c.system,
              rules: [c.listRule, c.viewRule, c.createRule, c.updateRule, c.deleteRule],
              indexes: c.indexes,
              query: c.options.query ?? null,
              fields: c.fields.map(({ id: _id, ...f }) => ({ ...f, options: { ...f.options, collectionId: undefined } })),
            }))
            .sort((a, b) => a.name.localeCompare(b.name)),
        },
      ]),
  );
}
