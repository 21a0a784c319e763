import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { casesFor } from './cases.ts';
import { replyProblems } from './checks.ts';
import { startFixture, type Fixture } from './fixture.ts';
import { closeAgent, send } from './http.ts';
import { registeredRoutes, routeTable, shapeOf } from './routes.ts';

/**
 * The owners' robustness rules, checked on every registered route: hostile bodies, types, sizes,
 * databases, tokens, path and query parameters never get a 5xx, always get the error shape without
 * internals or secrets, a refused write writes nothing, and the canary data stays as it was.
 */
describe('hardening sweep', () => {
  let f: Fixture;
  let secrets: string[];
  let before_: string;
  before(async () => {
    f = await startFixture();
    secrets = await f.secrets();
    before_ = await f.snapshot();
  });
  after(async () => {
    closeAgent();
    await f?.server.close();
  });

  test('the table names every registered route, and only those', async () => {
    const registered = registeredRoutes(f.server.app.printRoutes({ commonPrefix: false }));
    const table = routeTable(f).map((r) => shapeOf(r.route)).sort();
    assert.deepEqual(table, registered);
  });

  // Routes are only known once the fixture exists, so one test walks the table, reporting per route.
  test('every route answers hostile requests cleanly and leaves the data intact', async () => {
    const problems: string[] = [];
    let count = 0;
    // The state before a write request: what the previous refused request left, read afresh after an
    // accepted one (reads too may write: a migration's generation), whose effects may land after its
    // answer (on PostgreSQL the migrations directory mirrors the database's files once notified).
    let written: string | undefined;
    for (const spec of routeTable(f)) {
      const callers = { admin: f.server.adminToken, user: f.user.token, readerKey: f.readerKey, badTokens: f.badTokens };
      for (const c of casesFor(spec, callers)) {
        count++;
        const writing = c.request.method !== 'GET' && c.request.method !== 'HEAD';
        if (writing) written ??= await f.writes();
        const reply = await send(f.server.url, c.request);
        const found = replyProblems(reply, c.request.method, secrets, f.server.dir);
        if (reply.status < 400) written = undefined;
        else if (writing) {
          const now = await f.writes();
          if (now !== written) found.push(`refused with ${reply.status} but wrote: ${reply.text.slice(0, 160)}`);
          written = now;
        }
        if (c.expect && !c.expect.includes(reply.status)) found.push(`status ${reply.status}, expected ${c.expect.join(' or ')}: ${reply.text.slice(0, 160)}`);
        for (const p of found) problems.push(`${spec.route} [${c.label}]: ${p}`);
      }
      const now = await f.snapshot();
      if (now !== before_) problems.push(`${spec.route}: the canary data changed`);
    }
    console.log(`# ${count} hostile requests`);
    assert.deepEqual(problems, []);
  });
});
