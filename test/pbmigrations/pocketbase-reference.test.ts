import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Database } from '../../src/storage/index.ts';
import { callOp, migrationServer } from '../helpers/pb-migrations.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * What PocketBase itself does with a folder (measured by running its 0.22 and 0.39 binaries on the
 * corpus of docs/pocketbase.md) where Cairn did otherwise, each in a file of our own.
 */

let server: TestServer;
let db: Database;
const { inMigration } = migrationServer((s, d) => {
  server = s;
  db = d;
});
const call = callOp;

describe('as PocketBase does it', () => {
  test('an index names its columns bare, one of them a keyword of SQL (group) and one a function of PostgreSQL (user): both are the columns', async () => {
    await inMigration(async (host) => {
      await call(host, 'saveCollection', { name: 'teams', type: 'base', fields: [{ name: 'title', type: 'text' }] }, false);
      await call(host, 'saveCollection', {
        name: 'team_members',
        type: 'base',
        fields: [{ name: 'group', type: 'text' }, { name: 'user', type: 'text' }, { name: 'Rank', type: 'number' }],
        indexes: ['CREATE UNIQUE INDEX idx_team_member ON team_members (group, user)', 'CREATE INDEX idx_team_rank ON team_members (`Rank` DESC, user COLLATE NOCASE)'],
      }, false);
      await call(host, 'create', 'team_members', { group: 'g1', user: 'u1', Rank: 2 });
    });
    await assert.rejects(inMigration((host) => call(host, 'create', 'team_members', { group: 'g1', user: 'u1' })));
    assert.equal((await db.all('SELECT id FROM team_members')).length, 1);
  });

  test('an index on a quoted name that is no column is refused (no index on a constant string)', async () => {
    await assert.rejects(
      inMigration((host) => call(host, 'saveCollection', { name: 'bots', type: 'base', fields: [{ name: 'owner', type: 'text' }], indexes: ['CREATE INDEX idx_bots_ref ON bots ("owner_ref")'] }, false)),
      /idx_bots_ref/,
    );
  });

  test('a collection saved without an id gets pbc_ and the CRC-32 of its type and name, which a later file finds it by', async () => {
    const made = await inMigration((host) => call(host, 'saveCollection', { name: 'cfp_entries', type: 'base', fields: [{ name: 'title', type: 'text' }] }, false));
    // crc32("basecfp_entries"), as PocketBase 0.39 names it.
    assert.equal(made.id, 'pbc_1116231826');
    const found = await inMigration((host) => call(host, 'collection', 'pbc_1116231826'));
    assert.equal(found.name, 'cfp_entries');
  });

  test("v0.22's dao.saveSettings keeps what Cairn can take and leaves a blank app name and a URL without scheme as they were", async () => {
    const before = (await server.services.settings.view()) as any;
    await inMigration(async (host) => {
      const settings = await call(host, 'settings');
      settings.meta = { ...settings.meta, appName: '', appUrl: 'localhost:8080', senderName: 'Dashboard' };
      await call(host, 'saveSettings', settings, false);
    });
    const after = (await server.services.settings.view()) as any;
    assert.equal(after.meta.appName, before.meta.appName);
    assert.equal(after.meta.appUrl, before.meta.appUrl);
    assert.equal(after.meta.senderName, 'Dashboard');
  });

  test('the same settings saved as ≥ 0.23 saves them ($app.save) are refused, as PocketBase refuses them', async () => {
    await assert.rejects(
      inMigration(async (host) => {
        const settings = await call(host, 'settings');
        settings.meta = { ...settings.meta, appName: '' };
        await call(host, 'saveSettings', settings);
      }),
      /Failed to save the settings/,
    );
  });

  test('a field added without an id gets its type and the CRC-32 of its name, which a later file finds it by', async () => {
    const made = await inMigration((host) => call(host, 'saveCollection', { name: 'applicants', type: 'base', fields: [{ name: 'affiliation_note', type: 'text', required: true }] }, false));
    const field = made.fields.find((f: any) => f.name === 'affiliation_note');
    assert.equal(field.id, 'text2811900540');
    await inMigration(async (host) => {
      const applicants = await call(host, 'collection', made.id);
      applicants.fields.find((f: any) => f.id === 'text2811900540').required = false;
      await call(host, 'saveCollection', applicants, true);
    });
    assert.equal((await server.services.collections.all(db)).find('applicants')!.fields.find((f) => f.name === 'affiliation_note')!.required, false);
  });

  test('a record a file creates with a file it read beside it ($filesystem.fileFromPath) keeps the file', async () => {
    const logo = { __file: 'bytes', name: 'logo.png', bytes: Buffer.from('not really a png').toString('base64'), size: 16 };
    const record = await inMigration(async (host) => {
      await call(host, 'saveCollection', { name: 'partners', type: 'base', fields: [{ name: 'title', type: 'text' }, { name: 'logo', type: 'file', maxSelect: 1 }] }, false);
      return call(host, 'create', 'partners', { title: 'Ada', logo });
    });
    assert.match(record.logo, /^logo_\w+\.png$/);
    const res = await fetch(`${server.url}/api/files/partners/${record.id}/${record.logo}`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'not really a png');
  });

  test('a rule names an @request.auth field a later file adds to users: accepted, and in force once the field is there', async () => {
    await inMigration((host) => call(host, 'saveCollection', { name: 'audit_events', type: 'base', fields: [{ name: 'what', type: 'text' }], listRule: '@request.auth.isStaff = true' }, false));
    await inMigration(async (host) => {
      const users = await call(host, 'collection', 'users');
      users.fields.push({ name: 'isStaff', type: 'bool' });
      await call(host, 'saveCollection', users, true);
    });
    assert.equal((await server.services.collections.all(db)).find('audit_events')!.listRule, '@request.auth.isStaff = true');
    const res = await fetch(`${server.url}/api/collections/audit_events/records`);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).totalItems, 0);
  });

  test('the collections API still refuses such a rule', async () => {
    const res = await server.admin('POST', '/api/collections', { body: { name: 'audit_more', type: 'base', fields: [{ name: 'what', type: 'text' }], listRule: '@request.auth.isNobody = true' } });
    assert.equal(res.status, 400);
  });

  test("a view's fields are typed by where each column comes from: a relation, a select, a date, another collection's id, created, count()", async () => {
    await inMigration(async (host) => {
      await call(host, 'saveCollection', { name: 'series', type: 'base', viewRule: '', fields: [{ name: 'title', type: 'text' }, { name: 'kind', type: 'select', values: ['manga', 'novel'], maxSelect: 1 }, { name: 'released', type: 'date' }] }, false);
      const series = await call(host, 'collection', 'series');
      await call(host, 'saveCollection', { name: 'volumes', type: 'base', fields: [{ name: 'series', type: 'relation', collectionId: series.id, maxSelect: 1 }, { name: 'shop', type: 'url' }] }, false);
      const s = await call(host, 'create', 'series', { title: 'Dune', kind: 'novel', released: '1965-08-01 00:00:00.000Z' });
      await call(host, 'create', 'volumes', { series: s.id, shop: 'https://example.com/dune' });
      await call(host, 'saveCollection', {
        name: 'volume_list',
        type: 'view',
        listRule: '',
        viewQuery: "SELECT v.id, v.series, s.kind, s.released AS releasedOn, s.id AS seriesRef, v.created AS addedAt, v.shop || '' AS shopText, FALSE AS sent FROM volumes v JOIN series s ON s.id = v.series",
      }, false);
      await call(host, 'saveCollection', { name: 'series_counts', type: 'view', listRule: '', viewQuery: 'SELECT s.id, count(v.id) AS volumes, count(v.id) * 2 AS doubled FROM series s LEFT JOIN volumes v ON v.series = s.id GROUP BY s.id' }, false);
    });
    const set = await server.services.collections.all(db);
    const types = (name: string) => Object.fromEntries(set.find(name)!.fields.map((f) => [f.name, f.type]));
    const list = types('volume_list');
    assert.deepEqual({ series: list.series, kind: list.kind, releasedOn: list.releasedOn, seriesRef: list.seriesRef, addedAt: list.addedAt }, { series: 'relation', kind: 'select', releasedOn: 'date', seriesRef: 'relation', addedAt: 'autodate' });
    assert.equal(list.shopText, 'json');
    // A literal is an expression too, though PostgreSQL types FALSE a boolean.
    assert.equal(list.sent, 'json');
    assert.deepEqual(set.find('volume_list')!.fields.find((f) => f.name === 'kind')!.options.values, ['manga', 'novel']);
    assert.equal(types('series_counts').volumes, 'number');
    // An expression is json on both engines (PostgreSQL's view types it a number), and reads as its value.
    assert.equal(types('series_counts').doubled, 'json');
    const counts = await (await fetch(`${server.url}/api/collections/series_counts/records`)).json();
    assert.deepEqual([counts.items[0].volumes, Number(counts.items[0].doubled)], [1, 2]);
    const res = await fetch(`${server.url}/api/collections/volume_list/records?expand=seriesRef`);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.items[0].expand.seriesRef.title, 'Dune');
  });

  test('a view over a WITH table: its columns are json, a collection joined to it keeps its fields\' types', async () => {
    const made = await inMigration((host) =>
      call(host, 'saveCollection', {
        name: 'volume_shops',
        type: 'view',
        viewQuery: 'WITH picked AS (SELECT id AS vid, series AS sid FROM volumes) SELECT picked.vid AS id, picked.sid, s.kind, s.id AS seriesRef FROM picked JOIN series s ON s.id = picked.sid',
      }, false),
    );
    const types = Object.fromEntries(made.fields.map((f: any) => [f.name, f.type]));
    assert.deepEqual({ sid: types.sid, kind: types.kind, seriesRef: types.seriesRef }, { sid: 'json', kind: 'select', seriesRef: 'relation' });
  });
});
