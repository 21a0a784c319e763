// Reads the `tests.ApiScenario` literals of PocketBase's apis/*_test.go without Go: a tokenizer
// for Go source and an evaluator for the few expression forms the scenarios use (strings,
// concatenation, constants, strings.NewReader, local closures returning a reader). Anything else
// evaluates to an Opaque value naming what it was, so the runner can leave that scenario out as
// "needs Go" instead of guessing.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export class Opaque {
  constructor(why) {
    this.why = why;
  }
}

/** Go source → tokens {t: 'str'|'num'|'id'|'op'|'rune', v, pos}. Comments dropped. */
export function tokenize(src) {
  const out = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    if (c === '\n') {
      // Go's automatic semicolon, so statements can be told apart.
      const last = out[out.length - 1];
      if (last && (last.t !== 'op' || [')', ']', '}', '++', '--'].includes(last.v))) out.push({ t: 'op', v: ';', pos: i });
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') { i++; continue; }
    if (c === '/' && src[i + 1] === '/') { while (i < n && src[i] !== '\n') i++; continue; }
    if (c === '/' && src[i + 1] === '*') { const e = src.indexOf('*/', i + 2); i = e < 0 ? n : e + 2; continue; }
    const pos = i;
    if (c === '`') {
      const e = src.indexOf('`', i + 1);
      // Go drops carriage returns from raw strings.
      out.push({ t: 'str', v: src.slice(i + 1, e).replace(/\r/g, ''), pos });
      i = e + 1;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let s = '';
      while (j < n && src[j] !== c) {
        if (src[j] === '\\') {
          const [ch, len] = goEscape(src, j);
          s += ch;
          j += len;
        } else {
          s += src[j++];
        }
      }
      out.push({ t: c === '"' ? 'str' : 'rune', v: s, pos });
      i = j + 1;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(0[xX][0-9a-fA-F_]+|[0-9_]*\.?[0-9_]*(?:[eE][+-]?[0-9]+)?)/.exec(src.slice(i, i + 64));
      out.push({ t: 'num', v: Number(m[0].replace(/_/g, '')), pos });
      i += m[0].length;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i, i + 256));
      out.push({ t: 'id', v: m[0], pos });
      i += m[0].length;
      continue;
    }
    const three = src.slice(i, i + 3);
    const two = src.slice(i, i + 2);
    if (['...', '<<=', '>>=', '&^='].includes(three)) { out.push({ t: 'op', v: three, pos }); i += 3; continue; }
    if ([':=', '==', '!=', '<=', '>=', '&&', '||', '++', '--', '+=', '-=', '*=', '/=', '<-', '<<', '>>', '&^'].includes(two)) {
      out.push({ t: 'op', v: two, pos });
      i += 2;
      continue;
    }
    out.push({ t: 'op', v: c, pos });
    i++;
  }
  return out;
}

function goEscape(src, j) {
  const e = src[j + 1];
  const simple = { n: '\n', t: '\t', r: '\r', '"': '"', "'": "'", '\\': '\\', a: '\x07', b: '\b', f: '\f', v: '\v' };
  if (e in simple) return [simple[e], 2];
  if (e === 'x') return [String.fromCharCode(parseInt(src.slice(j + 2, j + 4), 16)), 4];
  if (e === 'u') return [String.fromCodePoint(parseInt(src.slice(j + 2, j + 6), 16)), 6];
  if (e === 'U') return [String.fromCodePoint(parseInt(src.slice(j + 2, j + 10), 16)), 10];
  if (/[0-7]/.test(e)) return [String.fromCharCode(parseInt(src.slice(j + 1, j + 4), 8)), 4];
  return [e, 2];
}

const OPEN = { '(': ')', '[': ']', '{': '}' };

/** Index just past the bracket that closes the one at toks[i]. */
export function matchClose(toks, i) {
  const stack = [];
  for (let k = i; k < toks.length; k++) {
    const v = toks[k].t === 'op' ? toks[k].v : null;
    if (v && OPEN[v]) stack.push(OPEN[v]);
    else if (v && (v === ')' || v === ']' || v === '}')) {
      stack.pop();
      if (stack.length === 0) return k + 1;
    }
  }
  throw new Error(`unbalanced bracket at ${toks[i].pos}`);
}

/** Splits toks[from, to) at top-level commas. */
export function splitTop(toks, from, to, sep = ',') {
  const parts = [];
  let start = from;
  for (let k = from; k < to; k++) {
    const v = toks[k].t === 'op' ? toks[k].v : null;
    if (v && OPEN[v]) { k = matchClose(toks, k) - 1; continue; }
    if (v === sep) { parts.push([start, k]); start = k + 1; }
  }
  if (start < to) parts.push([start, to]);
  return parts;
}

// What the standard library and the test package name, as far as scenarios use them.
const STD = {
  'http.MethodGet': 'GET', 'http.MethodHead': 'HEAD', 'http.MethodPost': 'POST', 'http.MethodPut': 'PUT',
  'http.MethodPatch': 'PATCH', 'http.MethodDelete': 'DELETE', 'http.MethodOptions': 'OPTIONS',
  'time.Nanosecond': 1, 'time.Microsecond': 1e3, 'time.Millisecond': 1e6, 'time.Second': 1e9, 'time.Minute': 60e9,
};
for (const [name, code] of Object.entries({ OK: 200, NoContent: 204, BadRequest: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, TooManyRequests: 429, InternalServerError: 500 })) {
  STD[`http.Status${name}`] = code;
}

/**
 * Package-level string and integer constants of PocketBase's own packages (`core.CollectionNameOTPs`),
 * read from the checkout, keyed by the import alias the test file uses.
 */
export class ConstTable {
  constructor(pbRoot) {
    this.pbRoot = pbRoot;
    this.byDir = new Map();
  }

  lookup(dir, name) {
    if (!this.byDir.has(dir)) this.byDir.set(dir, this.#read(dir));
    return this.byDir.get(dir).get(name);
  }

  #read(dir) {
    const consts = new Map();
    let files = [];
    try {
      files = readdirSync(join(this.pbRoot, dir)).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'));
    } catch {
      return consts;
    }
    for (const f of files) {
      const toks = tokenize(readFileSync(join(this.pbRoot, dir, f), 'utf8'));
      for (let k = 0; k < toks.length; k++) {
        if (toks[k].t !== 'id' || toks[k].v !== 'const') continue;
        const grouped = toks[k + 1]?.v === '(';
        const end = grouped ? matchClose(toks, k + 1) - 1 : k + 8;
        for (let m = grouped ? k + 2 : k + 1; m < end && m < toks.length; m++) {
          // NAME [Type] = literal
          if (toks[m].t !== 'id') continue;
          let eq = m + 1;
          if (toks[eq]?.t === 'id') eq++;
          if (toks[eq]?.v === '=' && (toks[eq + 1]?.t === 'str' || toks[eq + 1]?.t === 'num') && !/^[,+*]$/.test(toks[eq + 2]?.v ?? '')) {
            consts.set(toks[m].v, toks[eq + 1].v);
          }
        }
      }
    }
    return consts;
  }
}

/** import alias → directory inside PocketBase's repository. */
export function importsOf(toks) {
  const map = new Map();
  for (let k = 0; k < toks.length; k++) {
    if (toks[k].t !== 'id' || toks[k].v !== 'import') continue;
    const specs = toks[k + 1]?.v === '(' ? [k + 2, matchClose(toks, k + 1) - 1] : [k + 1, k + 3];
    for (let m = specs[0]; m < specs[1]; m++) {
      if (toks[m].t !== 'str') continue;
      const path = toks[m].v;
      const alias = toks[m - 1]?.t === 'id' && toks[m - 1].pos > toks[specs[0] - 1].pos ? toks[m - 1].v : path.split('/').pop();
      if (path.startsWith('github.com/pocketbase/pocketbase/')) map.set(alias, path.slice('github.com/pocketbase/pocketbase/'.length));
    }
  }
  return map;
}

/**
 * Evaluates toks[from, to) with `scope` (local name → value or {closure: [from, to]}).
 * Strings, ints, string slices and maps evaluate; anything Go-built is an Opaque.
 */
export function evaluate(toks, from, to, env) {
  const terms = splitBinary(toks, from, to);
  if (terms.ops.length) {
    const values = terms.parts.map(([a, b]) => evaluate(toks, a, b, env));
    const bad = values.find((v) => v instanceof Opaque);
    if (bad) return bad;
    let acc = values[0];
    for (let k = 0; k < terms.ops.length; k++) {
      const op = terms.ops[k];
      const v = values[k + 1];
      if (op === '+') acc = acc + v;
      else if (op === '*') acc = acc * v;
      else if (op === '-') acc = acc - v;
      else return new Opaque(`operator ${op}`);
    }
    return acc;
  }
  return primary(toks, from, to, env);
}

function splitBinary(toks, from, to) {
  const parts = [];
  const ops = [];
  let start = from;
  for (let k = from; k < to; k++) {
    const v = toks[k].t === 'op' ? toks[k].v : null;
    if (v && OPEN[v]) { k = matchClose(toks, k) - 1; continue; }
    if ((v === '+' || v === '*' || v === '-') && k > start) { parts.push([start, k]); ops.push(v); start = k + 1; }
  }
  parts.push([start, to]);
  return { parts, ops };
}

function primary(toks, from, to, env) {
  if (from >= to) return new Opaque('empty expression');
  const t = toks[from];
  if (to - from === 1) {
    if (t.t === 'str' || t.t === 'num') return t.v;
    if (t.t === 'id') {
      if (t.v === 'nil') return null;
      if (t.v === 'true') return true;
      if (t.v === 'false') return false;
      if (env.scope.has(t.v)) {
        const v = env.scope.get(t.v);
        if (v.closure) return new Opaque(`func value ${t.v}`);
        return evaluate(toks, v.expr[0], v.expr[1], env);
      }
      return new Opaque(`identifier ${t.v}`);
    }
  }
  if (t.t === 'op' && t.v === '(' && matchClose(toks, from) === to) return evaluate(toks, from + 1, to - 1, env);
  if (t.t === 'op' && t.v === '&') return primary(toks, from + 1, to, env);
  // qualified name: pkg.Name
  if (t.t === 'id' && toks[from + 1]?.v === '.' && toks[from + 2]?.t === 'id' && to - from === 3) {
    const q = `${t.v}.${toks[from + 2].v}`;
    if (q in STD) return STD[q];
    const dir = env.imports.get(t.v);
    const v = dir !== undefined ? env.consts.lookup(dir, toks[from + 2].v) : undefined;
    return v !== undefined ? v : new Opaque(q);
  }
  // composite literals: []string{…}, map[string]string{…}, map[string]int{…}
  if (t.v === '[' && toks[from + 1]?.v === ']') {
    const brace = findBrace(toks, from, to);
    if (brace < 0 || matchClose(toks, brace) !== to) return new Opaque('slice expression');
    const type = toks.slice(from + 2, brace).map((x) => x.v).join('');
    if (type !== 'string') return new Opaque(`[]${type} literal`);
    return splitTop(toks, brace + 1, to - 1).map(([a, b]) => evaluate(toks, a, b, env));
  }
  if (t.v === 'map') {
    const brace = findBrace(toks, from, to);
    if (brace < 0 || matchClose(toks, brace) !== to) return new Opaque('map expression');
    const obj = {};
    for (const [a, b] of splitTop(toks, brace + 1, to - 1)) {
      const [[ka, kb], [va, vb]] = splitTop(toks, a, b, ':');
      obj[evaluate(toks, ka, kb, env)] = evaluate(toks, va, vb, env);
    }
    return obj;
  }
  // calls
  if (to - from >= 3 && toks[to - 1].v === ')') {
    let open = to - 1;
    // walk back to the '(' that matches the final ')'
    for (let k = from; k < to; k++) {
      if (toks[k].v === '(' && matchClose(toks, k) === to) { open = k; break; }
      if (toks[k].t === 'op' && OPEN[toks[k].v]) k = matchClose(toks, k) - 1;
    }
    const callee = toks.slice(from, open).map((x) => x.v).join('');
    const args = splitTop(toks, open + 1, to - 1).map(([a, b]) => evaluate(toks, a, b, env));
    const bad = args.find((v) => v instanceof Opaque);
    if (callee === 'strings.NewReader' || callee === 'bytes.NewBufferString' || callee === 'string' || callee === '[]byte') return bad ?? args[0];
    if (callee === 'strings.Repeat') return bad ?? String(args[0]).repeat(args[1]);
    if (callee === 'url.QueryEscape') return bad ?? goQueryEscape(args[0]);
    if (callee === 'filepath.Join') return testDataPath(toks, open + 1, to - 1, env);
    if (callee === 'os.ReadFile') return bad ?? (args[0] instanceof TestDataFile ? args[0] : new Opaque('os.ReadFile'));
    if (callee === 'bytes.NewReader' || callee === 'bytes.NewBuffer') return bad ?? args[0];
    if (env.scope.has(callee) && env.scope.get(callee)?.closure && args.length === 0) {
      const [a, b] = env.scope.get(callee).closure;
      return evaluate(toks, a, b, env);
    }
    return new Opaque(`call ${callee}()`);
  }
  if (t.v === 'func') return new Opaque('func literal');
  return new Opaque(toks.slice(from, Math.min(to, from + 4)).map((x) => x.v).join(' '));
}

/** A file of PocketBase's test data (`tests/data/…`), read by the runner from the fixture copy. */
export class TestDataFile {
  constructor(rel) {
    this.rel = rel;
  }
}

// filepath.Join(path.Dir(currentFile), dataDirRelPath, "storage/…"): the path inside tests/data
function testDataPath(toks, from, to, env) {
  const parts = splitTop(toks, from, to);
  const at = parts.findIndex(([a, b]) => b - a === 1 && toks[a].v === 'dataDirRelPath');
  if (at < 0) return new Opaque('filepath.Join');
  const rest = parts.slice(at + 1).map(([a, b]) => evaluate(toks, a, b, env));
  if (rest.some((v) => typeof v !== 'string')) return new Opaque('filepath.Join');
  return new TestDataFile(rest.join('/'));
}

function goQueryEscape(s) {
  return Array.from(Buffer.from(String(s), 'utf8'))
    .map((b) => {
      const c = String.fromCharCode(b);
      if (/[A-Za-z0-9\-_.~]/.test(c)) return c;
      if (c === ' ') return '+';
      return `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

function findBrace(toks, from, to) {
  for (let k = from; k < to; k++) if (toks[k].v === '{') return k;
  return -1;
}
