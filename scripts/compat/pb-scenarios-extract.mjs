// Extracts PocketBase's API scenarios (`tests.ApiScenario` literals of apis/*_test.go) as plain data:
// each with its request and expectations when they need no Go to set up, else with the reason it
// cannot run over HTTP alone.

import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ConstTable, Opaque, TestDataFile, evaluate, importsOf, matchClose, splitTop, tokenize } from './go-literals.mjs';

const FIELDS_NEEDING_GO = ['BeforeTestFunc', 'TestAppFactory'];

/** Every scenario of every apis/*_test.go under pbRoot, in file order. */
export function extractAll(pbRoot) {
  const consts = new ConstTable(pbRoot);
  const files = readdirSync(join(pbRoot, 'apis')).filter((f) => f.endsWith('_test.go')).sort();
  return files.flatMap((f) => extractFile(join(pbRoot, 'apis', f), consts));
}

export function extractFile(path, consts) {
  const toks = tokenize(readFileSync(path, 'utf8'));
  const env = { imports: importsOf(toks), consts, scope: new Map() };
  const file = basename(path);
  const out = [];
  for (let k = 0; k < toks.length; k++) {
    // top-level `func TestX(t *testing.T) {`
    if (!(toks[k].v === 'func' && toks[k + 1]?.t === 'id' && toks[k + 2]?.v === '(')) continue;
    const fn = toks[k + 1].v;
    let body = matchClose(toks, k + 2);
    while (toks[body].v !== '{') body++;
    const end = matchClose(toks, body);
    out.push(...extractFunction(toks, body + 1, end - 1, { ...env, scope: new Map() }, file, fn));
    k = end - 1;
  }
  return out;
}

function extractFunction(toks, from, to, env, file, fn) {
  const out = [];
  let loopNote = null;
  for (let k = from; k < to; k++) {
    const t = toks[k];
    // local `name := expr` at the function's top level, kept for lazy evaluation
    // `x, err := os.ReadFile(path)`: the file's bytes, when it is one of the test data's
    if (t.t === 'id' && toks[k + 1]?.v === ',' && toks[k + 2]?.t === 'id' && toks[k + 3]?.v === ':=' && toks[k + 4]?.v === 'os') {
      let stop = k + 4;
      while (stop < to && toks[stop].v !== ';') stop++;
      env.scope.set(t.v, { expr: [k + 4, stop] });
    }
    if (t.t === 'id' && toks[k + 1]?.v === ':=' && (k === from || toks[k - 1].v === ';' || toks[k - 1].v === '{')) {
      const start = k + 2;
      let stop = start;
      while (stop < to && toks[stop].v !== ';') {
        if (toks[stop].t === 'op' && '([{'.includes(toks[stop].v)) stop = matchClose(toks, stop);
        else stop++;
      }
      if (toks[start].v === 'func') {
        let brace = start;
        while (toks[brace].v !== '{') brace = toks[brace].v === '(' ? matchClose(toks, brace) : brace + 1;
        const close = matchClose(toks, brace);
        const inner = toks[brace + 1]?.v === 'return' ? [brace + 2, close - 1] : null;
        // a trailing ';' before the closing brace belongs to the return statement
        if (inner && toks[inner[1] - 1].v === ';') inner[1]--;
        env.scope.set(t.v, inner ? { closure: inner } : { closure: [close, close] });
      } else if (toks.slice(start, start + 3).map((x) => x.v).join('') !== '[]tests.ApiScenario') {
        env.scope.set(t.v, { expr: [start, stop] });
      }
    }
    if (toks[k].v === 'tests' && toks[k + 1]?.v === '.' && toks[k + 2]?.v === 'ApiScenario' && toks[k + 3]?.v === '{') {
      const isSlice = toks[k - 1]?.v === ']' && toks[k - 2]?.v === '[';
      const close = matchClose(toks, k + 3);
      const elements = isSlice ? splitTop(toks, k + 4, close - 1) : [[k + 3, close]];
      for (const [a, b] of elements) {
        if (toks[a].v !== '{') continue;
        out.push(readScenario(toks, a, b, env, file, fn));
      }
      k = close - 1;
    }
    // `for _, scenario := range scenarios { … }`: PocketBase's file tests repeat each scenario as HEAD
    if (t.v === 'for' && toks.slice(k, k + 8).some((x) => x.v === 'range')) {
      let brace = k;
      while (toks[brace].v !== '{') brace++;
      const close = matchClose(toks, brace);
      const text = toks.slice(brace, close).map((x) => x.v).join(' ');
      if (/MethodHead/.test(text)) loopNote = 'head-repeat';
      k = close - 1;
    }
  }
  if (loopNote !== 'head-repeat') return out;
  // the HEAD clone runs first, with no expected content (so an empty body is expected)
  return out.flatMap((s) => [
    finalize({ ...s, name: `(HEAD) ${s.name}`, method: 'HEAD', expectedContent: [], headRepeat: true }),
    s,
  ]);
}

function readScenario(toks, from, to, env, file, fn) {
  const fields = {};
  for (const [a, b] of splitTop(toks, from + 1, to - 1)) {
    const [[ka], [va, vb]] = splitTop(toks, a, b, ':');
    fields[toks[ka].v] = [va, vb];
  }
  const value = (name, fallback) => (fields[name] ? evaluate(toks, fields[name][0], fields[name][1], env) : fallback);
  const s = {
    file,
    fn,
    name: value('Name', ''),
    method: value('Method', 'GET'),
    url: value('URL', ''),
    body: value('Body', null),
    headers: value('Headers', {}),
    timeoutMs: 0,
    expectedStatus: value('ExpectedStatus', 0),
    expectedContent: value('ExpectedContent', []) ?? [],
    notExpectedContent: value('NotExpectedContent', []) ?? [],
    hasAfterTest: Boolean(fields.AfterTestFunc),
    needsGo: null,
  };
  const timeout = value('Timeout', 0);
  if (!(timeout instanceof Opaque)) s.timeoutMs = timeout / 1e6;
  s.goSetup = FIELDS_NEEDING_GO.filter((f) => fields[f]).join('+') || null;
  if (typeof s.name !== 'string' || !s.name) s.name = `${s.method}:${s.url}`;
  return finalize(s);
}

/** Sets needsGo: why the scenario cannot run over HTTP alone, or null. */
function finalize(s) {
  s.needsGo = s.goSetup;
  if (!s.needsGo) {
    for (const key of ['name', 'method', 'url', 'body', 'headers', 'expectedStatus', 'expectedContent', 'notExpectedContent']) {
      const bad = opaqueIn(s[key]);
      if (bad) {
        s.needsGo = `${key}: ${bad.why}`;
        break;
      }
    }
  }
  return s;
}

function opaqueIn(v) {
  if (v instanceof Opaque) return v;
  if (v instanceof TestDataFile) return null;
  if (Array.isArray(v)) return v.map(opaqueIn).find(Boolean) ?? null;
  if (v && typeof v === 'object') return Object.values(v).map(opaqueIn).find(Boolean) ?? null;
  return null;
}

// `node pb-scenarios-extract.mjs <pocketbase checkout>`: prints the scenarios as JSON
if (import.meta.url === `file://${process.argv[1]}`) {
  const all = extractAll(process.argv[2]);
  process.stdout.write(JSON.stringify(all, (k, v) => (v instanceof Opaque ? { opaque: v.why } : v), 2));
}
