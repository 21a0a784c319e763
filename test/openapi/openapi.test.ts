import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import { CATALOG } from '../../src/openapi/catalog.ts';
import { registeredRoutes } from '../hardening/routes.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { everyFieldType, scratchDir, typeCheck } from './helpers.ts';

describe('OpenAPI document', () => {
  let server: TestServer;
  let doc: any;
  before(async () => {
    server = await startServer();
    await server.admin('POST', '/api/databases', { body: { name: 'shop' } });
    await everyFieldType(server, 'shop');
    const res = await server.admin('GET', '/api/openapi.json', { db: 'shop' });
    assert.equal(res.status, 200, res.text);
    doc = res.body;
  });
  after(() => server?.close());

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 3000));
  });

  test('describes every registered route, each with a summary from the catalog', () => {
    // The API's routes; the dashboard's pages (`GET /`, `/_/*`) are not described.
    const registered = registeredRoutes(server.app.printRoutes({ commonPrefix: false })).filter((r) => r.split(' ')[1].startsWith('/api/'));
    const documented: string[] = [];
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const method of Object.keys(item)) documented.push(`${method.toUpperCase()} ${p.replace(/\{[^}]+\}/g, ':')}`);
    }
    for (const route of registered) assert.ok(documented.includes(route), `${route} is in the document`);
    const missing = registered.filter((r) => !Object.keys(CATALOG).some((k) => k.replace(/:[A-Za-z]+/g, ':') === r));
    assert.deepEqual(missing, [], 'every route has a catalog entry');
    const ids = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item).map((op) => op.operationId));
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
  });

  test('has the schemas and record paths of each collection of the x-dbname database', () => {
    const s = doc.components.schemas;
    for (const name of ['PostsRecord', 'PostsCreate', 'PostsUpdate', 'PostsList', 'UsersRecord', 'UsersCreate', 'TagsRecord', 'BlogEntriesRecord']) assert.ok(s[name], name);
    const post = s.PostsRecord;
    assert.deepEqual(post.properties.views, { type: 'number' });
    assert.deepEqual(post.properties.published, { type: 'boolean' });
    assert.deepEqual(post.properties.status, { type: 'string', enum: ['draft', 'live', ''] });
    assert.deepEqual(post.properties.flags, { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] } });
    assert.equal(post.properties.tags.type, 'array');
    assert.equal(post.properties.author.type, 'string');
    assert.equal(post.properties.gallery.type, 'array');
    assert.ok(post.required.includes('title') && !post.required.includes('secret_note'), 'hidden fields are optional (administrators only)');
    assert.deepEqual(s.PostsCreate.required, ['title']);
    assert.equal(s.PostsCreate.properties.cover, undefined, 'files go in multipart bodies');
    assert.deepEqual(s.PostsUpdate.required, []);
    assert.ok(s.UsersCreate.required.includes('password'));
    assert.equal(s.UsersRecord.properties.passwordHash, undefined);
    assert.ok(doc.paths['/api/collections/posts/records'].get);
    assert.ok(doc.paths['/api/collections/posts/records/{id}'].patch);
    assert.deepEqual(doc.paths['/api/collections/posts/records/{id}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/PostsRecord' });
    // Another database: its own collections.
    return server.admin('GET', '/api/openapi.json').then((res) => {
      assert.equal(res.body.components.schemas.PostsRecord, undefined);
      assert.ok(res.body.components.schemas.UsersRecord);
    });
  });

  test('administrators only', async () => {
    assert.equal((await server.request('GET', '/api/openapi.json')).status, 401);
    const user = await createUser(server, 'openapi@example.com');
    assert.equal((await server.request('GET', '/api/openapi.json', { token: user.token })).status, 403);
  });

  test('a client generated with openapi-typescript type-checks calls to a collection', async () => {
    const types = astToString(await openapiTS(doc));
    const dir = scratchDir();
    try {
      const client = `
import createClient from 'openapi-fetch';
import type { paths, components } from './api';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:8090', headers: { 'x-dbname': 'shop' } });

export async function calls(): Promise<void> {
  const { data } = await client.GET('/api/collections/posts/records/{id}', { params: { path: { id: 'abc' } } });
  if (data) {
    const title: string = data.title;
    const views: number = data.views;
    const status: 'draft' | 'live' | '' = data.status;
    const flags: Array<'a' | 'b' | 'c'> = data.flags;
    const tags: string[] = data.tags;
    const name: 'posts' = data.collectionName;
    // @ts-expect-error: no such field
    data.nope;
    void [title, views, status, flags, tags, name];
  }
  const list = await client.GET('/api/collections/posts/records', { params: { query: { page: 1, perPage: 10, filter: 'views > 1' } } });
  const first: components['schemas']['PostsRecord'] | undefined = list.data?.items[0];
  void first;
  await client.POST('/api/collections/posts/records', { body: { title: 'hello', views: 1, status: 'draft', flags: ['a'] } });
  // @ts-expect-error: title is required
  await client.POST('/api/collections/posts/records', { body: { views: 1 } });
  // @ts-expect-error: views is a number
  await client.PATCH('/api/collections/posts/records/{id}', { params: { path: { id: 'abc' } }, body: { views: 'many' } });
  // @ts-expect-error: not one of the select's values
  await client.PATCH('/api/collections/posts/records/{id}', { params: { path: { id: 'abc' } }, body: { status: 'archived' } });
  const logs = await client.GET('/api/logs', { params: { query: { filter: 'status >= 400' } } });
  const status: number | undefined = logs.data?.items[0]?.data.status;
  void status;
}
`;
      assert.deepEqual(typeCheck(dir, { 'api.ts': types, 'client.ts': client }), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
