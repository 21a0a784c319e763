import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { idFromSeed } from '../../src/lib/ids.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const SECRET = 'wf-secret-0123456789abcdef';

describe('inbound workflows', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-wf-'));
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    server = await startServer({ dir, env: { CAIRN_WEBHOOK_BACKOFF_MS: '50' } });
    receiver = await startReceiver();
    await createCollection(server, {
      name: 'leads',
      fields: [
        { name: 'name', type: 'text', required: true },
        { name: 'score', type: 'number' },
        { name: 'note', type: 'text' },
        { name: 'raw', type: 'json' },
      ],
    });
    const res = await server.admin('POST', '/api/workflows', {
      body: {
        name: 'new-lead',
        secret: SECRET,
        steps: [
          { type: 'create_record', collection: 'leads', data: { name: '{{event.contact.name}}', score: '{{event.score}}', note: 'from {{ event.source }}', raw: '{{event.contact}}' } },
          { type: 'webhook', url: `${receiver.url}/lead`, method: 'POST', body: { lead: '{{steps.0.record.id}}', who: 'Lead {{event.contact.name}}' } },
        ],
      },
    });
    assert.equal(res.status, 200, res.text);
  });
  after(async () => {
    await server.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (name: string, body: unknown, token?: string, db?: string) =>
    server.request('POST', `/api/workflows/${name}/events`, { body, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, db });

  async function finishedRun(name: string, id: string) {
    return waitFor(async () => {
      const res = await server.admin('GET', `/api/workflows/${name}/runs/${id}`);
      assert.equal(res.status, 200, res.text);
      return ['success', 'failed'].includes(res.body.status) && res.body;
    });
  }

  test('an event with the workflow secret is accepted with 202, and its run creates the record and calls the webhook', async () => {
    const res = await post('new-lead', { contact: { name: 'Ada', email: 'ada@example.com' }, score: 7, source: 'form' }, SECRET);
    assert.equal(res.status, 202, res.text);
    assert.match(res.body.id, /^[a-z0-9]{15}$/);

    const run = await finishedRun('new-lead', res.body.id);
    assert.equal(run.status, 'success', run.error);
    const [created, hook] = run.steps;
    assert.equal(created.type, 'create_record');
    assert.equal(created.status, 'success');
    assert.deepEqual(
      { name: created.record.name, score: created.record.score, note: created.record.note, raw: created.record.raw },
      { name: 'Ada', score: 7, note: 'from form', raw: { name: 'Ada', email: 'ada@example.com' } },
    );
    const stored = await server.admin('GET', `/api/collections/leads/records/${created.record.id}`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.name, 'Ada');

    assert.equal(hook.status, 'success');
    const [req] = await receiver.waitForRequests(1);
    assert.deepEqual(req.json, { lead: created.record.id, who: 'Lead Ada' });
    assert.equal(req.headers['content-type'], 'application/json');
    const logs = await waitFor(async () => (await server.admin('GET', `/api/webhooks/logs?eventId=${hook.eventId}`)).body.items[0]);
    assert.equal(logs.source, 'workflow');
    assert.equal(logs.name, 'new-lead');
  });

  test('a wrong or missing secret is a 401 and stores nothing', async () => {
    const before = (await server.admin('GET', '/api/workflows/new-lead/runs')).body.totalItems;
    assert.equal((await post('new-lead', { contact: { name: 'Eve' } }, 'wf-secret-wrong-0000000000')).status, 401);
    assert.equal((await post('new-lead', { contact: { name: 'Eve' } })).status, 401);
    assert.equal((await post('new-lead', { contact: { name: 'Eve' } }, 'eyJhbGciOiJIUzI1NiJ9.eyJpZCI6IngifQ.forged')).status, 401);
    const user = await createUser(server, 'wf-user@example.com');
    assert.equal((await post('new-lead', { contact: { name: 'Eve' } }, user.token)).status, 401, 'a user token is not enough');
    assert.equal((await server.admin('GET', '/api/workflows/new-lead/runs')).body.totalItems, before);
  });

  test('an unknown workflow is a 401 without credentials and a 404 with them', async () => {
    assert.equal((await post('nope', {}, SECRET)).status, 401);
    assert.equal((await post('nope', {}, server.adminToken)).status, 404);
  });

  test('an API key of the database is accepted; a key of another database is not', async () => {
    const key = await server.admin('POST', '/api/keys', { body: { name: 'ingest', enabled: true, roles: 'service' } });
    assert.equal(key.status, 200, key.text);
    const res = await post('new-lead', { contact: { name: 'Key' }, score: 1 }, key.body.key);
    assert.equal(res.status, 202, res.text);
    assert.equal((await finishedRun('new-lead', res.body.id)).status, 'success');

    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'wf_other' } })).status, 200);
    const foreign = await server.admin('POST', '/api/keys', { body: { name: 'other', enabled: true, roles: 'service' }, db: 'wf_other' });
    assert.equal((await post('new-lead', { contact: { name: 'Key' } }, foreign.body.key)).status, 401);
  });

  test('an event that is not a JSON object is a 400; malformed JSON is a 400', async () => {
    assert.equal((await post('new-lead', 'just text', SECRET)).status, 400);
    const malformed = await server.request('POST', '/api/workflows/new-lead/events', { raw: '{"a":', headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
  });

  test('a failing step fails the run with its reason and skips the rest', async () => {
    const res = await post('new-lead', { score: 3 }, SECRET);
    const run = await finishedRun('new-lead', res.body.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.steps[0].status, 'failed');
    assert.match(run.steps[0].error, /name/);
    assert.deepEqual(run.steps[1], { type: 'webhook', status: 'skipped' });
    assert.match(run.error, /Step 1 \(create_record\) failed/);
  });

  test('runs are listed newest first, for administrators only', async () => {
    const runs = await server.admin('GET', '/api/workflows/new-lead/runs?perPage=2');
    assert.equal(runs.status, 200);
    assert.ok(runs.body.totalItems >= 3);
    assert.equal(runs.body.items.length, 2);
    assert.ok(runs.body.items[0].created >= runs.body.items[1].created);
    assert.deepEqual(Object.keys(runs.body.items[0]).sort(), ['created', 'error', 'event', 'id', 'status', 'steps', 'updated', 'workflow']);
    assert.equal((await server.request('GET', '/api/workflows/new-lead/runs')).status, 401);
    assert.equal((await server.admin('GET', '/api/workflows/nope/runs')).status, 404);
  });

  describe('definition', () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['a name with a slash', { name: 'a/b' }, 'name'],
      ['no steps', { steps: [] }, 'steps'],
      ['an unknown step type', { steps: [{ type: 'shell', cmd: 'rm -rf /' }] }, 'steps'],
      ['a missing collection', { steps: [{ type: 'create_record', collection: 'ghosts', data: {} }] }, 'steps'],
      ['data that is not an object', { steps: [{ type: 'create_record', collection: 'leads', data: 'x' }] }, 'steps'],
      ['a webhook to a non-http URL', { steps: [{ type: 'webhook', url: 'file:///etc/passwd' }] }, 'steps'],
      ['a short secret', { secret: 'short' }, 'secret'],
    ];
    for (const [what, change, key] of cases) {
      test(`${what} is a 400`, async () => {
        const res = await server.admin('POST', '/api/workflows', { body: { name: 'ok', steps: [{ type: 'webhook', url: 'http://127.0.0.1:9/' }], ...change } });
        assert.equal(res.status, 400, res.text);
        assert.ok(res.body.data[key]);
      });
    }

    test('without a secret one is generated and shown once; the workflow never shows it again', async () => {
      const res = await server.admin('POST', '/api/workflows', { body: { name: 'generated', steps: [{ type: 'webhook', url: `${receiver.url}/gen` }] } });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.secret.length >= 32);
      const shown = await server.admin('GET', '/api/workflows/generated');
      assert.equal(shown.body.secret, undefined);
      assert.equal(shown.body.secretHash, undefined);
      assert.equal((await post('generated', { a: 1 }, res.body.secret)).status, 202);
      assert.equal((await server.admin('POST', '/api/workflows', { body: { name: 'generated', steps: [{ type: 'webhook', url: `${receiver.url}/gen` }] } })).status, 409);
      assert.equal((await server.request('POST', '/api/workflows', { body: { name: 'anon', steps: [{ type: 'webhook', url: `${receiver.url}/gen` }] } })).status, 401);
      assert.equal((await server.admin('DELETE', '/api/workflows/generated')).status, 204);
      assert.equal((await server.admin('GET', '/api/workflows/generated')).status, 404);
    });
  });

  test('a run interrupted after its record was created resumes at restart without a duplicate', async () => {
    // The state a crash leaves between the record's commit and the step's outcome being saved.
    const db = await server.services.registry.get('main');
    const runId = 'interrupted0001';
    const now = new Date().toISOString();
    await db.run("INSERT INTO _workflow_runs (id, workflow, event, status, steps, error, created, updated) VALUES (?, 'new-lead', ?, 'running', '[]', '', ?, ?)", [
      runId,
      JSON.stringify({ contact: { name: 'Resumed' }, score: 5, source: 'crash' }),
      now,
      now,
    ]);
    const recordId = idFromSeed(`${runId}:0`);
    assert.equal((await server.admin('POST', '/api/collections/leads/records', { body: { id: recordId, name: 'Resumed', score: 5 } })).status, 200);

    await server.close();
    server = await startServer({ dir, env: { CAIRN_WEBHOOK_BACKOFF_MS: '50' } });
    const run = await finishedRun('new-lead', runId);
    assert.equal(run.status, 'success', run.error);
    assert.equal(run.steps[0].record.id, recordId);
    const copies = await server.admin('GET', `/api/collections/leads/records?filter=${encodeURIComponent("name = 'Resumed'")}`);
    assert.equal(copies.body.totalItems, 1);
    await waitFor(() => receiver.requests.some((r) => r.json?.lead === recordId), { what: 'the resumed webhook step' });
  });
});
