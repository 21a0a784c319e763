// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Expr, Operand } from './ast.ts';
import { FilterError } from './errors.ts';
import { tokenize } from './lexer.ts';
import { MAX_COMPARISONS, MAX_DEPTH, MAX_FILTER_LENGTH, parseFilter } from './parser.ts';

/** The tree in a compact prefix form: `(and (= a 1) (or …))`. */
function show(e: Expr): string {
  if (e.type !== 'comparison') return `(${e.type} ${show(e.left)} ${show(e.right)})`;
  const operand = (o: Operand): string => (o.type === 'identifier' ? o.name : o.type === 'call' ? `${o.name}(${o.args.map(operand).join(' ')})` : JSON.stringify(o.value));
  return `(${e.operator} ${operand(e.left)} ${operand(e.right)})`;
}

function fails(text: string, position: number, message?: RegExp): void {
  assert.throws(
    () => parseFilter(text),
    (err: unknown) => {
      assert.ok(err instanceof FilterError, `expected a FilterError for ${JSON.stringify(text)}, got ${String(err)}`);
      assert.equal(err.position, position, `position for ${JSON.stringify(text)}: ${err.message}`);
      if (message) assert.match(err.message, message);
      return true;
    },
  );
}

describe('rules lexer', () => {
  test('every operator is one token, longest first', () => {
    const ops = ['=', '!=', '>', '>=', '<', '<=', '~', '!~', '?=', '?!=', '?>', '?>=', '?<', '?<=', '?~', '?!~'];
    for (const op of ops) {
      const tokens = tokenize(`a${op}1`);
      assert.deepEqual(
        tokens.map((t) => [t.type, t.value]),
        [
          ['identifier', 'a'],
          ['operator', op],
          ['number', '1'],
          ['eof', ''],
        ],
        op,
      );
    }
  });

  test('identifiers carry dots, colons and @', () => {
    assert.deepEqual(
      tokenize('@request.auth.id @collection.posts:p.title tags:each author.name').map((t) => t.value),
      ['@request.auth.id', '@collection.posts:p.title', 'tags:each', 'author.name', ''],
    );
  });

  test('strings in either quote, with escaped quotes and backslashes; other escapes stay as written', () => {
    const values = (text: string) => tokenize(text).filter((t) => t.type === 'string').map((t) => t.value);
    assert.deepEqual(values(`'a' "b"`), ['a', 'b']);
    assert.deepEqual(values(`'it\\'s' "say \\"hi\\"" 'back\\\\slash'`), ["it's", 'say "hi"', 'back\\slash']);
    assert.deepEqual(values(`"a\\nb" '%\\_x'`), ['a\\nb', '%\\_x']);
    assert.deepEqual(values(`"it's" 'say "hi"'`), ["it's", 'say "hi"']);
  });

  test('numbers: integers, decimals, negatives, leading dot', () => {
    assert.deepEqual(
      tokenize('1 -2 3.5 .5 -0.25').filter((t) => t.type === 'number').map((t) => t.value),
      ['1', '-2', '3.5', '.5', '-0.25'],
    );
  });

  test('comments run to the end of the line and whitespace is skipped', () => {
    const tokens = tokenize('a = 1 // the rest && is ignored\n\t&& b = 2 // trailing');
    assert.deepEqual(
      tokens.map((t) => t.value),
      ['a', '=', '1', '&&', 'b', '=', '2', ''],
    );
  });

  test('positions are 0-based character offsets', () => {
    assert.deepEqual(
      tokenize('  title = "x"').map((t) => t.position),
      [2, 8, 10, 13],
    );
  });
});

describe('rules parser', () => {
  test('&& binds tighter than ||, both left-associative', () => {
    assert.equal(show(parseFilter('a = 1 || b = 2 && c = 3')), '(or (= a 1) (and (= b 2) (= c 3)))');
    assert.equal(show(parseFilter('a = 1 && b = 2 || c = 3')), '(or (and (= a 1) (= b 2)) (= c 3))');
    assert.equal(show(parseFilter('a = 1 && b = 2 && c = 3')), '(and (and (= a 1) (= b 2)) (= c 3))');
    assert.equal(show(parseFilter('a = 1 || b = 2 || c = 3')), '(or (or (= a 1) (= b 2)) (= c 3))');
  });

  test('parentheses group', () => {
    assert.equal(show(parseFilter('(a = 1 || b = 2) && c = 3')), '(and (or (= a 1) (= b 2)) (= c 3))');
    assert.equal(show(parseFilter('((a = 1))')), '(= a 1)');
  });

  test('literals: strings, numbers, true, false, null; operands on either side', () => {
    assert.equal(show(parseFilter(`"x" = title && 2 < views && true = ok && null != x && 'y' ?~ tags`)).length > 0, true);
    assert.equal(show(parseFilter('x = true')), '(= x true)');
    assert.equal(show(parseFilter('x = null')), '(= x null)');
    assert.equal(show(parseFilter('x = -1.5')), '(= x -1.5)');
    assert.equal(show(parseFilter('"a" = "b"')), '(= "a" "b")');
  });

  test('errors name the position of the problem', () => {
    fails('', 0, /empty/);
    fails('   ', 0, /empty/);
    fails('title =', 7, /expected a field/);
    fails('title "x"', 6, /expected an operator/);
    fails('title = "x', 8, /unterminated/);
    fails('a = 1 & b = 2', 6, /&&/);
    fails('a = 1 | b = 2', 6, /\|\|/);
    fails('(a = 1', 6, /expected "\)"/);
    fails('a = 1)', 5, /unexpected/);
    fails('a = 1 b = 2', 6, /unexpected/);
    fails('a == 1', 3, /expected a field/);
    fails('a = 1;', 5, /unexpected character/);
    fails('a = 1 -- comment', 6, /unexpected character/);
    fails('a = 12abc', 4, /invalid number/);
    fails('a = #', 4, /unexpected character/);
    fails('&& a = 1', 0, /expected a field/);
    fails('a = 1 &&', 8, /expected a field/);
    fails('() ', 1, /expected a field/);
  });

  test('limits: length, nesting and number of comparisons', () => {
    fails('a = "' + 'x'.repeat(MAX_FILTER_LENGTH) + '"', MAX_FILTER_LENGTH, /longer than/);
    const deep = '('.repeat(MAX_DEPTH + 1) + 'a = 1' + ')'.repeat(MAX_DEPTH + 1);
    fails(deep, MAX_DEPTH, /nested deeper/);
    parseFilter('('.repeat(MAX_DEPTH) + 'a = 1' + ')'.repeat(MAX_DEPTH));
    const many = Array.from({ length: MAX_COMPARISONS + 1 }, (_, i) => `a = ${i}`).join(' || ');
    assert.throws(() => parseFilter(many), /more than/);
  });
});
