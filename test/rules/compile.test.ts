import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Auth } from '../../src/context.ts';
import { isApiError } from '../../src/errors.ts';
import { RuleProgram } from '../../src/rules/access/program.ts';
import { scopeOf } from '../../src/rules/access/rule-access.ts';
import { FilterError } from '../../src/rules/errors.ts';
import { rulesFixture, type RulesFixture } from '../helpers/rules-fixture.ts';

const Q = `It's "quoted" \\ here`;
const ALL = ['Hello', 'Second', 'Third 50%_off', Q];

describe('filter compiler against SQLite', () => {
  let f: RulesFixture;
  before(async () => {
    f = await rulesFixture();
  });
  after(() => f.close());

  async function expectFilter(cases: Array<[string, string[]]>): Promise<void> {
    for (const [text, expected] of cases) assert.deepEqual(await f.filter('posts', text), expected, text);
  }

  async function expectError(text: string, position: number, message: RegExp): Promise<void> {
    await assert.rejects(
      () => f.filter('posts', text),
      (err: unknown) => {
        assert.ok(err instanceof FilterError, `${text}: ${String(err)}`);
        assert.equal(err.position, position, `${text}: ${err.message}`);
        assert.match(err.message, message, text);
        return true;
      },
    );
  }

  test('comparison operators on numbers, text, booleans and dates', async () => {
    await expectFilter([
      ['views = 10', ['Hello']],
      ['views != 10', ['Second', 'Third 50%_off', Q]],
      ['views > 5', ['Hello', 'Second']],
      ['views >= 5', ['Hello', 'Second', Q]],
      ['views < 10', ['Third 50%_off', Q]],
      ['views <= 10', ['Hello', 'Third 50%_off', Q]],
      ['10 = views', ['Hello']],
      ['views = "10"', ['Hello']],
      ['views = 10.0', ['Hello']],
      ['published = true', ['Hello', 'Third 50%_off']],
      ['published = "true"', ['Hello', 'Third 50%_off']],
      ['published != true', ['Second', Q]],
      ['due > "2025-01-01"', ['Second']],
      ['due = "2024-01-01 10:00:00.000Z"', ['Hello']],
      ['due != "" && due < @now', ['Hello']],
      ['due = ""', ['Third 50%_off', Q]],
      ['due = null', ['Third 50%_off', Q]],
      ['due != null', ['Hello', 'Second']],
      ['"" = ""', ALL],
      ['null != ""', []],
    ]);
  });

  test('~ and !~: case-insensitive contains, % kept as written, _ and % escaped otherwise', async () => {
    await expectFilter([
      ['title ~ "ell"', ['Hello']],
      ['title ~ "ELL"', ['Hello']],
      ['title !~ "e"', ['Third 50%_off']],
      ['title ~ "_off"', ['Third 50%_off']],
      ['title ~ "d_5"', []],
      ['title ~ "He%"', ['Hello']],
      ['title ~ "%50\\%%"', ['Third 50%_off']],
    ]);
  });

  test('quoting and escapes in string literals', async () => {
    await expectFilter([
      [`title = 'It\\'s "quoted" \\\\ here'`, [Q]],
      [`title = "It's \\"quoted\\" \\\\ here"`, [Q]],
      [`title = "Hello" // a comment with "quotes" && views = 1\n || title = 'Second'`, ['Hello', 'Second']],
    ]);
  });

  test('precedence and parentheses', async () => {
    await expectFilter([
      ['views = 0 || views = 10 && published = false', ['Third 50%_off']],
      ['(views = 0 || views = 10) && published = true', ['Hello', 'Third 50%_off']],
      ['views = 0 || (views = 10 && published = true)', ['Hello', 'Third 50%_off']],
      ['views > 100 || views < 1 || title = "Second"', ['Second', 'Third 50%_off']],
    ]);
  });

  test('multiple-value fields: plain operators need every value, any-of forms one', async () => {
    await expectFilter([
      ['tags ?= "news"', ['Hello', 'Second']],
      ['tags = "news"', ['Hello']],
      ['"news" ?= tags', ['Hello', 'Second']],
      ['tags ?!= "news"', ['Second', 'Third 50%_off', Q]],
      ['tags ?> "news"', ['Second']],
      ['tags ?>= "tech"', ['Second']],
      ['tags ?< "g"', [Q]],
      ['tags ?<= "fun"', [Q]],
      ['tags ?~ "EC"', ['Second']],
      ['tags ?!~ "e"', [Q]],
      ['tags > "a"', ['Hello', 'Second', Q]],
      ['tags = ""', ['Third 50%_off']],
      ['tags != ""', ['Hello', 'Second', Q]],
      ['tags:each = "news"', ['Hello']],
      ['tags:each ?= "news"', ['Hello', 'Second']],
      ['tags:each ?!= "news"', ['Second', 'Third 50%_off', Q]],
      ['tags:each != "fun"', ['Hello', 'Second']],
      ['tags:length = 2', ['Second']],
      ['tags:length = 0', ['Third 50%_off']],
      ['tags:length >= 1', ['Hello', 'Second', Q]],
    ]);
  });

  test('relation paths: single, multiple, deep, back-relations, JSON paths, :lower', async () => {
    await expectFilter([
      ['author.name = "alice"', ['Hello', Q]],
      ['author.role = "editor"', ['Hello', Q]],
      ['author.manager.name = "bob"', ['Hello', Q]],
      ['author.manager.manager.name = "carol"', ['Hello', Q]],
      ['author.manager = ""', ['Third 50%_off']],
      ['editors.name ?= "alice"', ['Second']],
      ['editors.name ?= "bob"', ['Hello']],
      ['editors.name ?~ "LI"', ['Second']],
      ['editors.name ?!~ "b"', ['Second']],
      ['editors:length = 2', ['Second']],
      ['editors = ""', ['Third 50%_off', Q]],
      ['author.teams.name ?= "red"', ['Hello', 'Second', Q]],
      ['author.teams.active = true', ['Hello', Q]],
      ['comments_via_post.text ?= "nice"', ['Hello']],
      ['comments_via_post.author.name ?= "alice"', ['Second']],
      ['meta.a.b = 2', ['Second']],
      ['meta.a.b > 0', ['Hello', 'Second']],
      ['meta.list.1 = 2', ['Hello']],
      ['title:lower = "hello"', ['Hello']],
      ['author.name:lower = "ALICE"', []],
      ['author.name:lower = "alice"', ['Hello', Q]],
    ]);
  });

  test('paths through single relations compare as semi-joins, and a missing related row is never equal', async () => {
    await expectFilter([
      ['author.manager.name != "bob"', ['Second', 'Third 50%_off']],
      ['author.manager.name = "bob"', ['Hello', Q]],
      ['author.manager.name ~ "OB"', ['Hello', Q]],
      ['author.manager.name !~ "ob"', ['Second']],
      ['author.manager.name ?= "bob"', ['Hello', Q]],
      ['author.manager.name ?!= "bob"', ['Second', 'Third 50%_off']],
      ['author.manager.name = ""', ['Third 50%_off']],
      ['author.manager.manager.name != "carol"', ['Second', 'Third 50%_off']],
    ]);
    const posts = await f.collection('posts');
    const set = await f.services.collections.all(f.db);
    const text = (rule: string) => RuleProgram.build(rule, scopeOf(posts, set), f.db.dialect).condition(f.ctx({ type: 'admin', id: 'x', email: 'a@b.c' }))?.text ?? '';
    assert.match(text('author.manager.name != "bob"'), /NOT EXISTS \(SELECT 1 FROM/);
  });

  test('rel.id is the relation field itself: no hop into the related table', async () => {
    const alice = await f.user('alice');
    await expectFilter([
      [`author.id = "${f.ids.alice}"`, ['Hello', Q]],
      [`author.id != "${f.ids.alice}"`, ['Second', 'Third 50%_off']],
      [`author.manager.id = "${f.ids.bob}"`, ['Hello', Q]],
      ['author.manager.id = ""', ['Third 50%_off']],
    ]);
    assert.deepEqual(await f.rule('posts', 'author.id = @request.auth.id', f.ctx(alice)), ['Hello', Q]);
    assert.deepEqual(await f.rule('posts', 'author.id = @request.auth.id', f.ctx()), []);
    const posts = await f.collection('posts');
    const set = await f.services.collections.all(f.db);
    const condition = RuleProgram.build('author.id = @request.auth.id', scopeOf(posts, set), f.db.dialect).condition(f.ctx(alice));
    assert.doesNotMatch(condition?.text ?? '', /users/, 'the related table is not read');
    assert.match(condition?.text ?? '', /"author"/);
  });

  test('operands through the same multiple relation refer to the same related record', async () => {
    await expectFilter([
      // Second's editors are alice (editor) and carol (no role): no single editor matches both.
      ['editors.role ?= "editor" && editors.name ?= "carol"', []],
      ['editors.role ?= "editor" && editors.name ?= "alice"', ['Second']],
      ['comments_via_post.text ?= "nice" && comments_via_post.author.name ?= "carol"', []],
      ['comments_via_post.text ?= "meh" && comments_via_post.author.name ?= "carol"', ['Hello']],
    ]);
  });

  test('@collection joins another collection; :alias gives independent rows', async () => {
    await expectFilter([
      ['@collection.users.name ?= "carol" && @collection.users.id ?= author', ['Third 50%_off']],
      ['@collection.teams.active ?= true', ALL],
      ['@collection.teams.active = true', []],
      ['@collection.users.name ?= "alice" && @collection.users.role ?= "viewer"', []],
      ['@collection.users:a.name ?= "alice" && @collection.users:b.role ?= "viewer"', ALL],
      ['@collection.users:a.name ?= "alice" && @collection.users:b.name ?= "bob" && @collection.users:a.manager ?= @collection.users:b.id', ALL],
      ['@collection.comments.post ?= id && @collection.comments.text ?= "great"', ['Second']],
      ['title = "Hello" || @collection.teams.name ?= "nothing"', ['Hello']],
    ]);
  });

  test('date macros', async () => {
    await expectFilter([
      ['@now > "2000-01-01"', ALL],
      ['@todayStart <= @now && @now <= @todayEnd', ALL],
      ['@monthStart <= @now && @yearStart <= @monthStart && @yearEnd >= @monthEnd', ALL],
      ['@year > 2000 && @month >= 1 && @day >= 1 && @hour >= 0 && @minute >= 0 && @second >= 0 && @weekday >= 0', ALL],
      ['due > @now', ['Second']],
    ]);
  });

  test('hidden fields and private emails are for administrators only', async () => {
    await expectFilter([
      ['secret = "s1"', ['Hello']],
      ['author.email = "bob@example.com"', ['Second']],
    ]);
    const guest = f.ctx();
    await assert.rejects(() => f.filter('posts', 'secret = "s1"', guest), FilterError);
    assert.deepEqual(await f.filter('posts', 'author.email = "bob@example.com"', guest), []);
    // Related records count only where the caller may view them: alice's public email matches for
    // alice (she may view her own record), not for a guest.
    assert.deepEqual(await f.filter('posts', 'author.email = "alice@example.com"', guest), []);
    assert.deepEqual(await f.filter('posts', 'author.email = "alice@example.com"', f.ctx(await f.user('alice'))), ['Hello', Q]);
  });

  test('only administrators use @request and @collection in their own filters (403)', async () => {
    const alice = f.ctx(await f.user('alice'));
    for (const text of ['@request.auth.id != ""', '@collection.users.id ?= author', 'views > 1 || @request.method = "GET"']) {
      await assert.rejects(
        () => f.filter('posts', text, alice),
        (err: unknown) => isApiError(err) && err.status === 403,
        text,
      );
    }
    assert.deepEqual(await f.filter('posts', 'due > @now', alice), ['Second']);
  });

  test('unknown names, modifiers and paths are FilterErrors with their position', async () => {
    await expectError('views = 1 && nope = 2', 13, /unknown field "nope"/);
    await expectError('author.nope = 1', 0, /unknown field "author.nope"/);
    await expectError('title.x = 1', 0, /not a relation/);
    await expectError('title:upper = 1', 0, /unknown modifier/);
    await expectError('title:each = 1', 0, /multiple-value/);
    await expectError('title:length = 1', 0, /multiple-value/);
    await expectError('meta.a:length = 1', 0, /JSON path/);
    await expectError('nope_via_post.text = 1', 0, /unknown field/);
    await expectError('comments_via_nope.text = 1', 0, /unknown field/);
    await expectError('author.manager.manager.manager.manager.manager.manager.name = 1', 0, /deeper than 6/);
    await expectError('views = 1 || @nope = 1', 13, /unknown identifier "@nope"/);
    await expectError('@collection.nope.x = 1', 0, /unknown collection/);
    await expectError('@collection.users = 1', 0, /invalid name/);
    await expectError('@collection.users.nope = 1', 0, /unknown field/);
    await expectError('@request.nope = 1', 0, /unknown identifier/);
    await expectError('@request.auth.nope = 1', 0, /unknown field "nope"/);
    await expectError('@request.auth.id.x = 1', 0, /not a relation/);
    await expectError('@request.query.a.b = 1', 0, /no sub-fields/);
    await expectError('@request.method:length = 1', 0, /does not apply/);
    await expectError('@request.body.title:each = 1', 0, /multiple-value/);
    await expectError('@request.body.title:nope = 1', 0, /unknown modifier/);
    await expectError('@request.body.author.title = 1', 0, /unknown field "title"/);
    await expectError('@request.body.author.name:isset = 1', 0, /isset/);
  });

  test('sort: fields and single relations, never several values or @ names', async () => {
    const { compileSort } = await import('../../src/rules/sort.ts');
    const c = await f.collection('posts');
    const set = await f.services.collections.all(f.db);
    const resolver = () => f.access.filterResolver(f.ctx({ type: 'admin', id: 'a', email: '' }), c, set);
    assert.equal(compileSort('-views,author.name,@random,@rowid', resolver(), f.db.dialect, 't0').length, 4);
    for (const bad of ['tags', 'editors.name', '@request.auth.id', '@collection.users.name', 'comments_via_post.text', 'a b', 'nope']) {
      assert.throws(() => compileSort(bad, resolver(), f.db.dialect, 't0'), FilterError, bad);
    }
  });
});

describe('@request names in rules', () => {
  let f: RulesFixture;
  let alice: Auth;
  let bob: Auth;
  before(async () => {
    f = await rulesFixture();
    alice = await f.user('alice');
    bob = await f.user('bob');
  });
  after(() => f.close());

  const apiKey = (roles: string[]): Auth => ({ type: 'apikey', id: 'key000000000000', name: 'k', roles });

  test('@request.auth: the signed-in record, API keys and guests', async () => {
    const cases: Array<[string, Auth | undefined, string[]]> = [
      ['author = @request.auth.id', alice, ['Hello', Q]],
      ['author = @request.auth.id', bob, ['Second']],
      ['author = @request.auth.id', undefined, []],
      ['@request.auth.id != ""', alice, ALL],
      ['@request.auth.id != ""', undefined, []],
      ['@request.auth.id = ""', undefined, ALL],
      ['@request.auth.role = "editor"', alice, ALL],
      ['@request.auth.role = "editor"', bob, []],
      ['@request.auth.role = "editor"', undefined, []],
      ['@request.auth.roles ?= "editor"', alice, ALL],
      ['@request.auth.type = "authRecord" && @request.auth.collectionName = "users"', alice, ALL],
      ['@request.auth.verified = false && @request.auth.emailVisibility = true', alice, ALL],
      ['@request.auth.email = "alice@example.com"', alice, ALL],
      ['@request.auth.type = "apikey" && @request.auth.roles ?= "reader"', apiKey(['reader']), ALL],
      ['@request.auth.type = "apikey" && @request.auth.roles ?= "reader"', apiKey(['writer']), []],
      ['@request.auth.roles:length = 2', apiKey(['a', 'b']), ALL],
      ['@request.auth.type = "apikey"', alice, []],
      ['@request.auth.role = "editor"', apiKey(['editor']), []],
      ['@request.auth.teams.name ?= "red"', alice, ALL],
      ['@request.auth.teams.name ?= "blue"', alice, []],
      ['@request.auth.teams.active = true', bob, []],
      ['@request.auth.manager.name = "bob"', alice, ALL],
      ['@request.auth.manager.manager.name = "carol"', alice, ALL],
      ['@request.auth.teams.name ?= "red"', undefined, []],
      ['editors ?= @request.auth.id', alice, ['Second']],
      ['author.teams ?= @request.auth.teams.id', bob, ['Hello', 'Second', Q]],
      ['author.teams ?= @request.auth.teams.id', alice, ['Hello', 'Second', Q]],
      ['author.teams ?= @request.auth.teams.id && @request.auth.teams.active ?= false', bob, ['Second']],
      ['@request.auth.id:isset = true', alice, ALL],
      ['@request.auth.id:isset = true', undefined, []],
      ['author.role = @request.auth.role', alice, ['Hello', Q]],
    ];
    for (const [rule, auth, expected] of cases) {
      assert.deepEqual(await f.rule('posts', rule, f.ctx(auth)), expected, `${rule} as ${auth?.type ?? 'guest'} ${auth && 'id' in auth ? auth.id : ''}`);
    }
  });

  test('@request.body, query, headers and method', async () => {
    const body = (b: Record<string, unknown>) => f.ctx(alice, { body: b, method: 'POST' });
    const cases: Array<[string, ReturnType<typeof f.ctx>, string[]]> = [
      ['@request.body.title = title', body({ title: 'Hello' }), ['Hello']],
      ['@request.data.title = title', body({ title: 'Second' }), ['Second']],
      ['@request.body.views > 15', body({ views: '16' }), ALL],
      ['@request.body.views > 15', body({ views: 3 }), []],
      ['@request.body.published = true', body({ published: 'on' }), ALL],
      ['@request.body.title:isset = true', body({ title: '' }), ALL],
      ['@request.body.title:isset = true', body({}), []],
      ['@request.body.title:isset = false', body({}), ALL],
      ['@request.body.title:lower = "hello"', body({ title: 'HeLLo' }), ALL],
      ['@request.body.tags:length > 1', body({ tags: ['news', 'tech'] }), ALL],
      ['@request.body.tags:length > 1', body({ tags: 'news' }), []],
      ['@request.body.tags ?= "tech"', body({ tags: ['news', 'tech'] }), ALL],
      ['@request.body.tags:each ~ "e"', body({ tags: ['news', 'tech'] }), ALL],
      ['@request.body.tags:each ~ "e"', body({ tags: ['news', 'fun'] }), []],
      ['@request.body.tags:each ?~ "e"', body({ tags: ['news', 'fun'] }), ALL],
      ['@request.body.tags:each ?~ "e"', body({ tags: ['fun', 'sun'] }), []],
      ['tags ?= @request.body.tags', body({ tags: ['fun'] }), [Q]],
      ['@request.body.author.name = "alice"', body({ author: f.ids.alice }), ALL],
      ['@request.body.author.name = "alice"', body({ author: f.ids.bob }), []],
      ['@request.body.editors.role ?= "viewer"', body({ editors: [f.ids.alice, f.ids.bob] }), ALL],
      ['@request.body.editors.role ?= "viewer"', body({ editors: [f.ids.alice] }), []],
      ['@request.body.meta.x = 1', body({ meta: { x: 1 } }), ALL],
      ['@request.body.meta.x = 1', body({ meta: { x: 2 } }), []],
      ['@request.body.id = ""', body({}), ALL],
      ['@request.query.q = title', f.ctx(alice, { query: { q: 'Second' } }), ['Second']],
      ['@request.query.q:isset = false', f.ctx(alice), ALL],
      ['@request.headers.x_token = "abc"', f.ctx(alice, { headers: { 'x-token': 'abc' } }), ALL],
      ['@request.headers.x_token = "abc"', f.ctx(alice, { headers: { 'x-token': 'abd' } }), []],
      ['@request.method = "POST"', body({}), ALL],
      ['@request.method:lower = "get"', f.ctx(alice), ALL],
    ];
    for (const [rule, ctx, expected] of cases) {
      assert.deepEqual(await f.rule('posts', rule, ctx), expected, `${rule} with ${JSON.stringify(ctx.request.body)}`);
    }
  });

  test('request values are parameters: the compiled SQL is shared, hostile values stay data', async () => {
    const c = await f.collection('posts');
    const program = RuleProgram.build('title = @request.body.title || author = @request.auth.id', scopeOf(c, await f.services.collections.all(f.db)), f.db.dialect);
    const hostile = `x' OR 1=1; DROP TABLE posts; --`;
    const a = program.condition(f.ctx(alice, { body: { title: 'Hello' } }));
    const b = program.condition(f.ctx(bob, { body: { title: hostile } }));
    assert.equal(a.text, b.text);
    assert.ok(!a.text.includes('Hello') && !b.text.includes('DROP'));
    assert.ok(b.params.includes(hostile));
    assert.deepEqual(await f.matching('posts', a), ['Hello', Q]);
    assert.deepEqual(await f.matching('posts', b), ['Second']);
    // An empty value has another shape: "is empty" instead of an equality.
    const guest = program.condition(f.ctx(undefined, { body: {} }));
    assert.notEqual(guest.text, a.text);
    assert.deepEqual(await f.matching('posts', guest), []);
    assert.equal((await f.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM posts'))?.n, 4);
  });

  test('@now is bound when the rule runs, not when it was compiled', async () => {
    const c = await f.collection('posts');
    const program = RuleProgram.build('@now > "2000-01-01"', scopeOf(c, await f.services.collections.all(f.db)), f.db.dialect);
    const first = program.condition(f.ctx());
    await new Promise((resolve) => setImmediate(resolve));
    const second = program.condition(f.ctx());
    assert.equal(first.text, second.text);
    assert.ok(typeof first.params[0] === 'string' && /^\d{4}-/.test(first.params[0] as string));
  });
});
