import type { Queryable, SchemaStep } from '../storage/index.ts';
import type { Collection, CollectionType } from './model.ts';

/** Reading and writing the `_collections` metadata table. */

interface CollectionRow {
  id: string;
  name: string;
  type: string;
  system: number;
  fields: string;
  options: string;
  listRule: string | null;
  viewRule: string | null;
  createRule: string | null;
  updateRule: string | null;
  deleteRule: string | null;
  indexes: string;
  created: string;
  updated: string;
}

export const collectionsTableStep: SchemaStep = {
  id: 'collections.table',
  async up(tx) {
    await tx.exec(`CREATE TABLE _collections (
      id TEXT PRIMARY KEY NOT NULL,
      name ${tx.dialect.columnDefinition('citext', false)} UNIQUE,
      type TEXT NOT NULL,
      system BOOLEAN DEFAULT FALSE NOT NULL,
      fields JSON DEFAULT '[]' NOT NULL,
      options JSON DEFAULT '{}' NOT NULL,
      listRule TEXT DEFAULT NULL,
      viewRule TEXT DEFAULT NULL,
      createRule TEXT DEFAULT NULL,
      updateRule TEXT DEFAULT NULL,
      deleteRule TEXT DEFAULT NULL,
      indexes JSON DEFAULT '[]' NOT NULL,
      created TEXT NOT NULL,
      updated TEXT NOT NULL
    )`);
  },
};

function fromRow(row: CollectionRow): Collection {
  return {
    id: row.id,
    name: row.name,
    type: row.type as CollectionType,
    system: row.system === 1,
    fields: JSON.parse(row.fields),
    options: JSON.parse(row.options),
    listRule: row.listRule,
    viewRule: row.viewRule,
    createRule: row.createRule,
    updateRule: row.updateRule,
    deleteRule: row.deleteRule,
    indexes: JSON.parse(row.indexes),
    created: row.created,
    updated: row.updated,
  };
}

function toParams(c: Collection): unknown[] {
  return [
    c.name,
    c.type,
    c.system,
    JSON.stringify(c.fields),
    JSON.stringify(c.options),
    c.listRule,
    c.viewRule,
    c.createRule,
    c.updateRule,
    c.deleteRule,
    JSON.stringify(c.indexes),
    c.created,
    c.updated,
  ];
}

export async function loadCollections(db: Queryable): Promise<Collection[]> {
  const rows = await db.all<CollectionRow>('SELECT * FROM _collections ORDER BY created, name');
  return rows.map(fromRow);
}

export async function insertCollection(db: Queryable, c: Collection): Promise<void> {
  await db.run(
    `INSERT INTO _collections (id, name, type, system, fields, options, listRule, viewRule, createRule, updateRule, deleteRule, indexes, created, updated)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [c.id, ...toParams(c)],
  );
}

export async function updateCollection(db: Queryable, c: Collection): Promise<void> {
  await db.run(
    `UPDATE _collections SET name = ?, type = ?, system = ?, fields = ?, options = ?, listRule = ?, viewRule = ?, createRule = ?,
     updateRule = ?, deleteRule = ?, indexes = ?, created = ?, updated = ? WHERE id = ?`,
    [...toParams(c), c.id],
  );
}

export async function deleteCollectionRow(db: Queryable, id: string): Promise<void> {
  await db.run('DELETE FROM _collections WHERE id = ?', [id]);
}
