import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { RequestContext } from '../../src/context.ts';
import { isApiError } from '../../src/errors.ts';
import { RuleProgram } from '../../src/rules/access/program.ts';
import { scopeOf } from '../../src/rules/access/rule-access.ts';
import { FilterError } from '../../src/rules/errors.ts';
import { compileFilter, compileSort } from '../../src/rules/index.ts';
import type { Sql } from '../../src/storage/sql.ts';
import { ADMIN, rulesFixture, type RulesFixture } from '../helpers/rules-fixture.ts';

/** Names, valid and not, that random expressions are assembled from. */
const NAMES = [
  'title', 'views', 'published', 'tags', 'editors', 'author', 'meta', 'due', 'id', 'secret', 'nope',
  'author.name', 'author.manager.name', 'editors.name', 'editors.teams.name', 'comments_via_post.text', 'meta.a.b',
  'tags:each', 'tags:length', 'title:lower', 'title:isset', 'author.email', 'x.y.z', '__proto__', 'constructor', 'meta.__proto__',
  'meta.constructor', '@request.headers.constructor', '@request.query.__proto__', '@request.body.meta.__proto__', '@request.auth.constructor',
  '@request.auth.id', '@request.auth.role', '@request.auth.roles', '@request.auth.teams.name', '@request.body.title',
  '@request.body.tags:length', '@request.body.title:isset', '@request.data.author.name', '@request.query.q',
  '@request.headers.x_token', '@request.method', '@request.nope', '@collection.users.name', '@collection.users:u.id',
  '@collection.nope.x', '@now', '@todayStart', '@year', '@random', '@',
];
/** The rest of the language, and things that do not belong in it. */
const VOCABULARY = [
  ...NAMES,
  '=', '!=', '>', '>=', '<', '<=', '~', '!~', '?=', '?!=', '?>', '?>=', '?<', '?<=', '?~', '?!~',
  '&&', '||', '(', ')', '&', '|', '!', '?',
  '"x"', "'y'", '""', "''", '"%"', '"_"', '"\\""', "'\\''", '"unterminated', '1', '-2.5', '.5', '12abc', 'true', 'false', 'null',
  ';', '--', '/*', '*/', '//', '\n', 'UNION', 'SELECT', 'DROP TABLE posts', "' OR 1=1 --", '`', '[', ']', '{', '}', '$', '\\', '\u0000', 'é',
];

const tokenSoup = fc.array(fc.constantFrom(...VOCABULARY), { minLength: 0, maxLength: 14 }).map((parts) => parts.join(' '));
/** Mostly well-formed: a field, an operator and a value, combined with && and ||. */
const comparison = fc
  .tuple(fc.constantFrom(...NAMES), fc.constantFrom('=', '!=', '>', '<=', '~', '!~', '?=', '?!=', '?>', '?~'), fc.constantFrom(...NAMES, '"x"', '1', 'true', 'null', '""'))
  .map(([a, op, b]) => `${a} ${op} ${b}`);
const wellFormed = fc.array(fc.tuple(comparison, fc.constantFrom(' && ', ' || ')), { minLength: 1, maxLength: 4 }).map((parts) => {
  let text = parts[0][0];
  for (let i = 1; i < parts.length; i++) text = `(${text})${parts[i][1]}${parts[i][0]}`;
  return text;
});
const anything = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 40 }), tokenSoup, wellFormed);

describe('random filters, rules and sorts', () => {
  let f: RulesFixture;
  let alice: RequestContext;
  before(async () => {
    f = await rulesFixture();
    alice = f.ctx(await f.user('alice'), { body: { title: 'Hello', tags: ['news'], author: f.ids.alice }, query: { q: 'x' }, headers: { 'x-token': 't' } });
  });
  after(() => f.close());

  /** Runs a condition the way the records layer does; any SQLite error fails the property. */
  async function runs(where: Sql): Promise<void> {
    await f.db.all(`SELECT t0.id FROM posts t0 WHERE ${where.text} LIMIT 5`, where.params);
  }

  function expectedRefusal(err: unknown): boolean {
    return err instanceof FilterError || (isApiError(err) && err.status >= 400 && err.status < 500);
  }

  test('a filter compiles to SQL that SQLite accepts, or is refused cleanly', async () => {
    const posts = await f.collection('posts');
    const set = await f.services.collections.all(f.db);
    await fc.assert(
      fc.asyncProperty(anything, fc.boolean(), async (text, admin) => {
        const ctx = admin ? f.ctx(ADMIN) : alice;
        let where: Sql;
        try {
          where = compileFilter(text, f.access.filterResolver(ctx, posts, set), { dialect: f.db.dialect });
        } catch (err) {
          if (expectedRefusal(err)) return;
          throw err;
        }
        await runs(where);
      }),
      { numRuns: 400 },
    );
  });

  test('a rule is refused when saved, or evaluates for any caller', async () => {
    const posts = await f.collection('posts');
    const set = await f.services.collections.all(f.db);
    const guest = f.ctx();
    await fc.assert(
      fc.asyncProperty(anything, async (text) => {
        let program: RuleProgram;
        try {
          program = RuleProgram.build(text, scopeOf(posts, set), f.db.dialect);
        } catch (err) {
          if (err instanceof FilterError) return;
          throw err;
        }
        await runs(program.condition(alice));
        await runs(program.condition(guest));
      }),
      { numRuns: 300 },
    );
  });

  test('a sort compiles to ORDER BY terms SQLite accepts, or is refused cleanly', async () => {
    const posts = await f.collection('posts');
    const set = await f.services.collections.all(f.db);
    const sortText = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.array(fc.tuple(fc.constantFrom('', '-', '+'), fc.constantFrom(...NAMES)), { maxLength: 5 }).map((terms) => terms.map(([d, n]) => d + n).join(',')),
    );
    await fc.assert(
      fc.asyncProperty(sortText, async (text) => {
        let terms: Sql[];
        try {
          terms = compileSort(text, f.access.filterResolver(alice, posts, set), f.db.dialect, 't0');
        } catch (err) {
          if (expectedRefusal(err)) return;
          throw err;
        }
        const order = terms.length > 0 ? ` ORDER BY ${terms.map((t) => t.text).join(', ')}` : '';
        await f.db.all(`SELECT t0.id FROM posts t0${order} LIMIT 5`, terms.flatMap((t) => [...t.params]));
      }),
      { numRuns: 300 },
    );
  });

  test('nothing was changed by any of it', async () => {
    assert.equal((await f.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM posts'))?.n, 4);
    assert.deepEqual(await f.filter('posts', 'id != ""'), ['Hello', 'Second', 'Third 50%_off', `It's "quoted" \\ here`]);
  });
});
