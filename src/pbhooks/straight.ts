/**
 * Whether a pb_hooks handler may be tried on the main thread (main-runtime.ts): its source is
 * straight-line code, so it ends in a time bounded by its length, and a try run there that has to be
 * given up changes nothing. Judged on the text, conservatively: anything that could loop, run code
 * the handler does not show (a helper of the file, a callback), block (`sleep`, `$os.cmd`) or act
 * outside the run (files, the network) makes it no. The handler then runs in a worker, as always.
 */

/** Calls of a free name that end by themselves and act on nothing outside the run. */
const FREE_CALLS = new Set([
  'if', 'switch', 'return', 'typeof', 'void', 'delete', 'in', 'of', 'throw', 'case',
  'String', 'Number', 'Boolean', 'parseInt', 'parseFloat', 'isNaN', 'isFinite',
  'encodeURIComponent', 'decodeURIComponent', 'encodeURI', 'decodeURI', 'toString',
]);

/** Names a member chain may start from: the event, `$app` (its calls go through the run's ops) and pure built-ins. */
const ROOTS = new Set(['$app', 'console', '$security', 'JSON', 'Math', 'String', 'Number', 'Object', 'Array', 'Date', 'Boolean']);

/** Classes a handler may make. */
const NEWABLE = new Set([
  'Record', 'DateTime', 'Date', 'Error', 'ApiError', 'BadRequestError', 'NotFoundError', 'ForbiddenError',
  'UnauthorizedError', 'TooManyRequestsError',
]);

/** Methods that take a callback, a pattern, or run what they are given. */
const UNSAFE_METHODS = /\.\s*(forEach|map|filter|reduce|reduceRight|some|every|find|findIndex|findLast|findLastIndex|sort|toSorted|flatMap|from|runInTransaction|call|apply|bind|then|catch|finally|match|matchAll|replace|replaceAll|test|exec|search|split|repeat|padStart|padEnd|fill|newQuery|db)\s*\(/;

const KEYWORDS = /\b(for|while|do|function|class|try|catch|finally|require|eval|Function|import|async|await|yield|with|this|arguments|sleep|setTimeout|setInterval|Proxy|Reflect|globalThis|process|\$os|\$http|\$filesystem|\$template|\$mails|\$dbx|__hooks|goto)\b/;

/** The text without comments and string literals (each left as `""`); undefined for a template with `${…}`. */
function withoutStrings(src: string): string | undefined {
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const ch = src[i];
    if (ch === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      out += '\n';
    } else if (ch === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      if (end < 0) return undefined;
      i = end + 1;
      out += ' ';
    } else if (ch === '"' || ch === "'" || ch === '`') {
      let j = i + 1;
      for (; j < src.length && src[j] !== ch; j++) {
        if (src[j] === '\\') j++;
        else if (ch === '`' && src[j] === '$' && src[j + 1] === '{') return undefined;
        else if (ch !== '`' && src[j] === '\n') return undefined;
      }
      if (j >= src.length) return undefined;
      i = j;
      out += '""';
    } else out += ch;
  }
  return out;
}

/** The handler's parameter and body: its text after its head (`(e) =>`, `e =>`, `function name(e) {`). */
function bodyOf(code: string): { param: string; body: string } | undefined {
  const head = /^\s*(?:function\s*[\w$]*\s*\(\s*([\w$]*)\s*\)|\(\s*([\w$]*)\s*\)\s*=>|([\w$]+)\s*=>)/.exec(code);
  return head ? { param: head[1] ?? head[2] ?? head[3] ?? '', body: code.slice(head[0].length) } : undefined;
}

/** `$app` methods answered on the main thread (main-runtime.ts); any other goes to a worker, so trying is wasted. */
const APP_METHODS = new Set([
  'findRecordById', 'findRecordsByFilter', 'findFirstRecordByFilter', 'findFirstRecordByData', 'findRecordsByIds',
  'findAuthRecordByEmail', 'findAuthRecordByUsername', 'findCollectionByNameOrId', 'dao', 'logger',
]);

export function isStraightLine(source: string): boolean {
  const code = withoutStrings(source);
  if (code === undefined) return false;
  const parts = bodyOf(code);
  if (parts === undefined) return false;
  const { param, body } = parts;
  // Another function, a loop, a regular expression literal (`/…/` where a value starts) or any name above.
  if (body.includes('=>') || KEYWORDS.test(body) || UNSAFE_METHODS.test(body)) return false;
  if (/(^|[=(,:;!&|?{}[\n]|return)\s*\/[^/*]/.test(body)) return false;
  for (const m of body.matchAll(/(?:\$app|\bapp|\bdao\s*\(\s*\))\s*\??\.\s*([\w$]+)/g)) if (!APP_METHODS.has(m[1])) return false;
  const locals = new Set<string>([param]);
  for (const m of body.matchAll(/\b(?:const|let|var)\s+([\w$]+)/g)) locals.add(m[1]);
  for (const m of body.matchAll(/\b(?:const|let|var)\s*[{[]([^=]*)[}\]]\s*=/g)) for (const n of m[1].split(/[\s,:]+/)) if (n) locals.add(n);
  for (const m of body.matchAll(/new\s+([\w$.]+)/g)) if (!NEWABLE.has(m[1])) return false;
  // A free call must be of a known function; `new X(` was judged above.
  for (const m of body.matchAll(/(?<![.\w$])([\w$]+)\s*\(/g)) {
    const before = body.slice(0, m.index).trimEnd();
    if (before.endsWith('new')) continue;
    if (!FREE_CALLS.has(m[1])) return false;
  }
  // A member chain must start from the event, $app, a built-in or one of the handler's own values.
  for (const m of body.matchAll(/(?<![.\w$])([\w$]+)\s*(?:\?\.|\.|\[)/g)) {
    if (!ROOTS.has(m[1]) && !locals.has(m[1]) && !/^\d/.test(m[1])) return false;
  }
  return true;
}
