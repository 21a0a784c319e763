import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildServices, type Services } from '../../src/app.ts';
import { type Auth, GUEST, type RequestContext } from '../../src/context.ts';
import type { Database } from '../../src/storage/index.ts';
import { commitWrite } from '../../src/records/write/plan.ts';
import { driverEnv } from '../helpers/postgres.ts';
import { testConfig } from '../helpers/server.ts';

// Issue 46: a record write is one plan passed forward, each step a function of its own file
// (src/records/write/<step>.ts). The plan notes every step it enters; these tests read that trail
// after real writes and require each step exactly once, in order.

const CREATE = ['parse', 'validate', 'rules', 'stage', 'hooks', 'statement', 'answer'];
const UPDATE = ['parse', 'rules', 'stage', 'load', 'validate', 'hooks', 'statement', 'answer'];

describe('a record write passes each step once, forward', () => {
  let dir: string;
  let services: Services;
  let db: Database;
  const ctx = (body: Record<string, unknown>, method = 'POST', auth: Auth = GUEST): RequestContext => ({
    dbName: 'main',
    db,
    auth,
    request: { method, headers: {}, query: {}, body, ip: '127.0.0.1' },
  });

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-write-plan-'));
    services = await buildServices(testConfig(dir, await driverEnv(dir)));
    db = await services.registry.get('main');
    await services.collections.create(db, {
      name: 'notes',
      createRule: '',
      updateRule: '',
      viewRule: '',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'count', type: 'number' },
      ],
    });
    await services.collections.update(db, 'users', { createRule: '' });
  });

  after(async () => {
    await services.registry.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a create: parse → validate → rules → stage → hooks → statement → answer', async () => {
    const notes = await services.collections.get(db, 'notes');
    const body = { title: 'first', 'count+': 2 };
    const write = await services.records.prepareCreate(ctx(body), notes, body);
    assert.deepEqual(write.steps, CREATE.slice(0, 4), 'before the transaction');
    const record = (await commitWrite(db, write)) as Record<string, unknown>;
    assert.deepEqual(write.steps, CREATE);
    assert.equal(record.title, 'first');
    assert.equal(record.count, 2, 'the modifier resolved into the value stored');
  });

  test('an update: parse → rules → stage, then load → validate → hooks → statement, then answer', async () => {
    const notes = await services.collections.get(db, 'notes');
    const created = (await services.records.create(ctx({ title: 'a' }), notes, { title: 'a' })) as { id: string };
    const body = { 'count+': 5 };
    const write = await services.records.prepareUpdate(ctx(body, 'PATCH'), notes, created.id, body);
    assert.deepEqual(write.steps, UPDATE.slice(0, 3));
    const record = (await commitWrite(db, write)) as Record<string, unknown>;
    assert.deepEqual(write.steps, UPDATE);
    assert.equal(record.count, 5);
  });

  test('an upsert passes the steps of the write it becomes', async () => {
    const notes = await services.collections.get(db, 'notes');
    const fresh = { id: 'upsertnote00001', title: 'new' };
    const created = await services.records.prepareUpsert(ctx(fresh, 'PUT'), notes, fresh);
    await commitWrite(db, created);
    assert.equal(created.action, 'create');
    assert.deepEqual(created.steps, CREATE);
    const again = { id: 'upsertnote00001', title: 'changed' };
    const updated = await services.records.prepareUpsert(ctx(again, 'PUT'), notes, again);
    const record = (await commitWrite(db, updated)) as Record<string, unknown>;
    assert.equal(updated.action, 'update');
    assert.deepEqual(updated.steps, UPDATE);
    assert.equal(record.title, 'changed');
  });

  test('an auth record create hashes its password with the hasher handed in, in the stage step', async () => {
    const users = await services.collections.get(db, 'users');
    const deps = services.records.deps;
    const handed = deps.passwords;
    const hashed: string[] = [];
    deps.passwords = { ...handed, hash: (password) => (hashed.push(password), handed.hash(password)) };
    try {
      const body = { email: 'plan@example.com', password: 'plan-password-1', passwordConfirm: 'plan-password-1' };
      const write = await services.records.prepareCreate(ctx(body), users, body);
      assert.deepEqual(hashed, ['plan-password-1'], 'hashed before the transaction');
      await commitWrite(db, write);
      assert.deepEqual(write.steps, CREATE);
      const row = await db.get<{ passwordHash: string }>('SELECT passwordHash FROM users WHERE email = ?', ['plan@example.com']);
      assert.ok(row && (await handed.verify(row.passwordHash, 'plan-password-1')));
    } finally {
      deps.passwords = handed;
    }
  });

  test('a refused create stops at the step that refuses it, and hashes nothing', async () => {
    await services.collections.update(db, 'users', { createRule: null });
    const users = await services.collections.get(db, 'users');
    const deps = services.records.deps;
    const handed = deps.passwords;
    let hashes = 0;
    deps.passwords = { ...handed, hash: (password) => (hashes++, handed.hash(password)) };
    try {
      const body = { email: 'closed@example.com', password: 'plan-password-1', passwordConfirm: 'plan-password-1' };
      await assert.rejects(services.records.prepareCreate(ctx(body), users, body), (err: { status?: number }) => err.status === 403);
      assert.equal(hashes, 0);
    } finally {
      deps.passwords = handed;
      await services.collections.update(db, 'users', { createRule: '' });
    }
  });
});
