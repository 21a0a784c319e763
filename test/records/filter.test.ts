// Unit tests of the filter language as record lists use it: parse, then compile against a real
// collection's fields. The rules domain owns the tests of the full rule language (@request, @collection).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeCollection } from '../../src/collections/normalize.ts';
import type { Collection } from '../../src/collections/model.ts';
import { RecordFieldResolver } from '../../src/records/resolver.ts';
import { compileFilter, compileSort, FilterError, parseFilter } from '../../src/rules/index.ts';
import { tokenize } from '../../src/rules/lexer.ts';
import { MAX_DEPTH } from '../../src/rules/parser.ts';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';

const context = { find: () => undefined, validateRule: () => undefined, validateOptions: [] };
const posts: Collection = normalizeCollection(
  { name: 'posts', fields: [{ name: 'title', type: 'text' }, { name: 'views', type: 'number' }, { name: 'tags', type: 'select', options: { values: ['a', 'b'], maxSelect: 2 } }] },
  undefined,
  context,
);
const resolver = () => new RecordFieldResolver(posts, 't0', { dialect: sqliteDialect, lookup: () => undefined, allowHidden: false });
const compile = (text: string) => compileFilter(text, resolver(), { dialect: sqliteDialect });

function failsAt(text: string, position: number, message?: RegExp): void {
  assert.throws(
    () => compile(text),
    (err: unknown) => err instanceof FilterError && err.position === position && (!message || message.test(err.message)),
    text,
  );
}

describe('filter lexer and parser', () => {
  test('operators are read longest first', () => {
    assert.deepEqual(
      tokenize('a ?!= b ?~ c != d >= e ~ f').filter((t) => t.type === 'operator').map((t) => t.value),
      ['?!=', '?~', '!=', '>=', '~'],
    );
  });

  test('strings take both quotes and backslash escapes of quotes only', () => {
    const [a, , b] = tokenize(`"say \\"hi\\"" = 'it\\'s \\d'`);
    assert.deepEqual([a.type, a.value], ['string', 'say "hi"']);
    assert.deepEqual([b.type, b.value], ['string', "it's \\d"]);
  });

  test('numbers, negative numbers and identifiers with paths and modifiers', () => {
    assert.deepEqual(
      tokenize('views > -1.5 && tags:length = 2 && author.name = "x"').map((t) => `${t.type}:${t.value}`),
      ['identifier:views', 'operator:>', 'number:-1.5', 'and:&&', 'identifier:tags:length', 'operator:=', 'number:2', 'and:&&', 'identifier:author.name', 'operator:=', 'string:x', 'eof:'],
    );
  });

  test('&& binds tighter than ||, parentheses group', () => {
    const e = parseFilter('a = 1 || b = 2 && c = 3');
    assert.equal(e.type, 'or');
    assert.equal(e.type === 'or' && e.right.type, 'and');
    const g = parseFilter('(a = 1 || b = 2) && c = 3');
    assert.equal(g.type, 'and');
  });

  test('errors say where', () => {
    failsAt('title = ', 8, /expected a field, a value/);
    failsAt('title = "open', 8, /unterminated/);
    failsAt('title = 1 & views = 2', 10, /did you mean "&&"/);
    failsAt('(title = 1', 10, /expected "\)"/);
    failsAt('title = 1 title', 10, /unexpected/);
    failsAt('title # 1', 6, /unexpected character/);
    failsAt('', 0, /empty/);
  });

  test('nesting, length and size are bounded', () => {
    const deep = `${'('.repeat(MAX_DEPTH + 1)}title = 1${')'.repeat(MAX_DEPTH + 1)}`;
    assert.throws(() => parseFilter(deep), /nested deeper/);
    assert.throws(() => parseFilter(`title = "${'x'.repeat(9000)}"`), /longer than/);
    assert.throws(() => parseFilter(Array.from({ length: 201 }, () => 'title = 1').join(' || ')), /more than 200 comparisons/);
  });
});

describe('filter compiler over a collection', () => {
  test('values only ever become parameters', () => {
    const hostile = `x' OR 1=1; DROP TABLE posts; --`;
    const q = compile(`title = "${hostile}" && views > 3`);
    assert.equal(q.text.includes(hostile), false);
    assert.deepEqual(q.params, [hostile, 3]);
    assert.match(q.text, /t0\."title" = \?/);
  });

  test('~ becomes an escaped, case-insensitive LIKE contains-match', () => {
    const q = compile('title ~ "50_%"');
    assert.match(q.text, /LIKE \? ESCAPE/);
    assert.deepEqual(q.params, ['50_%'], 'a value with % is the pattern as written');
    assert.deepEqual(compile('title ~ "a_b"').params, ['%a\\_b%']);
  });

  test('literals are coerced to the type of the field they are compared with', () => {
    assert.deepEqual(compile('views = "12"').params, [12]);
    assert.deepEqual(compile('created > "2024-01-02 03:04:05Z"').params, ['2024-01-02T03:04:05.000Z']);
  });

  test('= null and = "" both ask for the empty value', () => {
    assert.match(compile('title = null').text, /COALESCE\(t0\."title", ''\) = ''/);
    assert.match(compile('title != ""').text, /COALESCE\(t0\."title", ''\) != ''/);
  });

  test('unknown fields, hidden columns and @ identifiers are refused', () => {
    for (const text of ['nope = 1', 'passwordHash = 1', 'tokenKey = 1', '@request.auth.id = 1', 'title.x = 1', 'views:each = 1']) {
      assert.throws(() => compile(text), FilterError, text);
    }
  });

  test('sort terms resolve through the same fields; multiple-value fields cannot be sorted', () => {
    const terms = compileSort('-views,title,@rowid', resolver(), sqliteDialect, 't0');
    assert.deepEqual(
      terms.map((t) => t.text),
      ['t0."views" DESC', 't0."title" ASC', 't0.rowid ASC'],
    );
    assert.throws(() => compileSort('tags', resolver(), sqliteDialect, 't0'), /multiple-value/);
    assert.throws(() => compileSort('title;', resolver(), sqliteDialect, 't0'), /invalid sort term/);
  });
});
