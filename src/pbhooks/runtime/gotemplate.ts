/**
 * Go's html/template as pb_hooks' `$template` uses it (API contract §22), written for the worker:
 * like `workerMain`, this function is sent to the worker as source, so it is self-contained (no
 * imports, no outer names). It returns `{ parse(sources), render(set, data) }`.
 *
 * What it reads: text and `{{ }}` actions with `{{-`/`-}}` trimming and `{{/* comments *\/}}`;
 * pipelines of fields (`.a.b`, `$`, `$x.y`, methods called with arguments: `.record.GetString "x"`),
 * literals, parenthesized pipelines and `|` chains; `if`/`else if`/`else`, `range` (with `$i, $e :=`,
 * `else`, `break`, `continue`), `with`, `define`, `template`, `block`, `$x :=` and `$x =`. Functions:
 * Go's (`and or not len index slice print printf println eq ne lt le gt ge html js urlquery call`)
 * and PocketBase's `raw`. Every value printed is HTML-escaped except what `raw` returns (the whole
 * output is treated as HTML text: no escaping by attribute, script or URL context as Go does).
 */
/* eslint-disable */
export function goTemplate(): any {
  class Safe {
    constructor(readonly s: string) {}
    toString() {
      return this.s;
    }
  }
  class TemplateError extends Error {}
  const BREAK = { brk: true };
  const CONTINUE = { cont: true };

  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;').replace(/\0/g, '\uFFFD');

  // ---- lexing: text and actions ----
  type Tok = { kind: 'text'; text: string } | { kind: 'action'; src: string; line: number };
  function lex(src: string, name: string): Tok[] {
    const out: Tok[] = [];
    let i = 0;
    let trimNext = false;
    while (i < src.length) {
      const open = src.indexOf('{{', i);
      let text = open < 0 ? src.slice(i) : src.slice(i, open);
      if (trimNext) text = text.replace(/^\s+/, '');
      trimNext = false;
      if (open < 0) {
        if (text) out.push({ kind: 'text', text });
        break;
      }
      let start = open + 2;
      if (src[start] === '-' && /\s/.test(src[start + 1] ?? '')) {
        text = text.replace(/\s+$/, '');
        start += 1;
      }
      if (text) out.push({ kind: 'text', text });
      // The action ends at the first `}}` outside a string literal.
      let j = start;
      let quote = '';
      for (; j < src.length; j++) {
        const ch = src[j];
        if (quote) {
          if (ch === '\\' && quote !== '`') j++;
          else if (ch === quote) quote = '';
        } else if (ch === '"' || ch === '`' || ch === "'") quote = ch;
        else if (ch === '}' && src[j + 1] === '}') break;
      }
      if (j >= src.length) throw new TemplateError(`template: ${name}: unclosed action`);
      let body = src.slice(start, j);
      if (/\s-$/.test(body)) {
        body = body.slice(0, -1);
        trimNext = true;
      }
      const line = src.slice(0, open).split('\n').length;
      body = body.trim();
      if (!(body.startsWith('/*') && body.endsWith('*/'))) out.push({ kind: 'action', src: body, line });
      i = j + 2;
    }
    return out;
  }

  // ---- expressions ----
  type Expr =
    | { t: 'field'; base: Expr | null; path: string[] } // base null: the dot
    | { t: 'var'; name: string; path: string[] }
    | { t: 'lit'; v: any }
    | { t: 'ident'; name: string }
    | { t: 'pipe'; cmds: Expr[][] }; // each command: [callee, ...args]
  function words(src: string): string[] {
    const out: string[] = [];
    let i = 0;
    while (i < src.length) {
      const ch = src[i];
      if (/\s/.test(ch)) {
        i++;
        continue;
      }
      if (ch === '"' || ch === '`' || ch === "'") {
        let j = i + 1;
        while (j < src.length && src[j] !== ch) j += src[j] === '\\' && ch !== '`' ? 2 : 1;
        out.push(src.slice(i, j + 1));
        i = j + 1;
        continue;
      }
      if (ch === '(' || ch === ')' || ch === '|' || ch === ',') {
        out.push(ch);
        i++;
        continue;
      }
      if (src.startsWith(':=', i)) {
        out.push(':=');
        i += 2;
        continue;
      }
      let j = i;
      while (j < src.length && !/[\s()|,"`']/.test(src[j]) && !src.startsWith(':=', j)) j++;
      // `(...).field` keeps its field access as its own word.
      out.push(src.slice(i, j));
      i = j;
    }
    return out;
  }
  function parsePipeline(ws: string[], pos = { i: 0 }, closing?: string): Expr {
    const cmds: Expr[][] = [];
    let cmd: Expr[] = [];
    while (pos.i < ws.length) {
      const w = ws[pos.i];
      if (w === closing) {
        pos.i++;
        break;
      }
      pos.i++;
      if (w === '|') {
        cmds.push(cmd);
        cmd = [];
        continue;
      }
      if (w === '(') {
        const inner = parsePipeline(ws, pos, ')');
        // A field of the parenthesized value: `(index .a 0).name`.
        const next = ws[pos.i];
        if (next && next.startsWith('.') && next.length > 1) {
          pos.i++;
          cmd.push({ t: 'field', base: inner, path: next.slice(1).split('.') });
        } else cmd.push(inner);
        continue;
      }
      cmd.push(term(w));
    }
    cmds.push(cmd);
    if (cmds.some((c) => c.length === 0)) throw new TemplateError('template: missing command in pipeline');
    return { t: 'pipe', cmds };
  }
  function term(w: string): Expr {
    if (w === '.') return { t: 'field', base: null, path: [] };
    if (w.startsWith('.')) return { t: 'field', base: null, path: w.slice(1).split('.') };
    if (w.startsWith('$')) {
      const [name, ...path] = w.split('.');
      return { t: 'var', name, path };
    }
    if (w.startsWith('"')) return { t: 'lit', v: JSON.parse(w.replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1')) };
    if (w.startsWith('`')) return { t: 'lit', v: w.slice(1, -1) };
    if (w.startsWith("'")) return { t: 'lit', v: JSON.parse(`"${w.slice(1, -1)}"`).codePointAt(0) };
    if (w === 'true' || w === 'false') return { t: 'lit', v: w === 'true' };
    if (w === 'nil') return { t: 'lit', v: null };
    if (/^[-+]?(\d[\d_]*(\.\d*)?([eE][-+]?\d+)?|0x[0-9a-fA-F]+|\.\d+)$/.test(w)) return { t: 'lit', v: Number(w.replace(/_/g, '')) };
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(w)) return { t: 'ident', name: w };
    throw new TemplateError(`template: unexpected "${w}" in operand`);
  }

  // ---- the tree ----
  type Node =
    | { n: 'text'; text: string }
    | { n: 'out'; pipe: Expr; decl?: { names: string[]; assign: boolean } }
    | { n: 'if' | 'with'; pipe: Expr; decl?: { names: string[]; assign: boolean }; then: Node[]; else: Node[] }
    | { n: 'range'; pipe: Expr; decl?: { names: string[]; assign: boolean }; then: Node[]; else: Node[] }
    | { n: 'template'; name: string; pipe?: Expr }
    | { n: 'break' }
    | { n: 'continue' };

  /** A pipeline with an optional `$a, $b :=` (or `=`) in front. */
  function declared(src: string): { pipe: Expr; decl?: { names: string[]; assign: boolean } } {
    const ws = words(src);
    const at = ws.findIndex((w) => w === ':=' || w === '=');
    if (at > 0 && ws.slice(0, at).every((w) => w === ',' || /^\$[A-Za-z0-9_]*$/.test(w))) {
      const names = ws.slice(0, at).filter((w) => w !== ',');
      return { pipe: parsePipeline(ws.slice(at + 1)), decl: { names, assign: ws[at] === '=' } };
    }
    return { pipe: parsePipeline(ws) };
  }

  function parse(sources: { name: string; text: string }[]) {
    const defs = new Map<string, Node[]>();
    for (const { name, text } of sources) {
      const toks = lex(text, name);
      let i = 0;
      const block = (ends: string[]): { nodes: Node[]; end: string } => {
        const nodes: Node[] = [];
        while (i < toks.length) {
          const t = toks[i++];
          if (t.kind === 'text') {
            nodes.push({ n: 'text', text: t.text });
            continue;
          }
          const src = t.src;
          const kw = /^([a-z]+)\b\s*(.*)$/s.exec(src);
          const word = kw?.[1] ?? '';
          const rest = kw?.[2] ?? '';
          if (word === 'end' || word === 'else') {
            if (!ends.includes(word)) throw new TemplateError(`template: ${name}:${t.line}: unexpected {{${word}}}`);
            return { nodes, end: src };
          }
          if (word === 'if' || word === 'with' || word === 'range') {
            nodes.push(branch(word, rest));
            continue;
          }
          if (word === 'define' || word === 'block') {
            const ws = words(rest);
            const tname = term(ws[0]);
            if (tname.t !== 'lit' || typeof tname.v !== 'string') throw new TemplateError(`template: ${name}:${t.line}: ${word} needs a quoted name`);
            const body = block(['end']).nodes;
            defs.set(tname.v, body);
            if (word === 'block') nodes.push({ n: 'template', name: tname.v, pipe: ws.length > 1 ? parsePipeline(ws.slice(1)) : undefined });
            continue;
          }
          if (word === 'template') {
            const ws = words(rest);
            const tname = term(ws[0]);
            if (tname.t !== 'lit' || typeof tname.v !== 'string') throw new TemplateError(`template: ${name}:${t.line}: template needs a quoted name`);
            nodes.push({ n: 'template', name: tname.v, pipe: ws.length > 1 ? parsePipeline(ws.slice(1)) : undefined });
            continue;
          }
          if (src === 'break' || src === 'continue') {
            nodes.push({ n: src });
            continue;
          }
          const { pipe, decl } = declared(src);
          nodes.push({ n: 'out', pipe, decl });
        }
        if (ends.length) throw new TemplateError(`template: ${name}: unexpected EOF (an {{end}} is missing)`);
        return { nodes, end: '' };
      };
      /** `if`/`with`/`range` up to its {{end}}; `{{else if …}}` is a nested `if` that shares that {{end}}. */
      function branch(word: string, rest: string): Node {
        const { pipe, decl } = declared(rest);
        const then = block(['end', 'else']);
        let otherwise: Node[] = [];
        if (then.end !== 'end') {
          const more = then.end.slice(4).trim();
          const sub = /^(if|with)\s+(.*)$/s.exec(more);
          if (sub && word !== 'range') otherwise = [branch(sub[1], sub[2])];
          else otherwise = block(['end']).nodes;
        }
        return { n: word, pipe, decl, then: then.nodes, else: otherwise } as Node;
      }
      const top = block([]).nodes;
      // A file's own text is the template named after it (the first one is what render runs).
      if (!defs.has(name) || top.some((n) => n.n !== 'text' || n.text.trim() !== '')) defs.set(name, top);
    }
    return { defs, main: sources[0]?.name ?? '' };
  }

  // ---- evaluation ----
  const isTrue = (v: any): boolean => {
    if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
    if (Array.isArray(v)) return v.length > 0;
    if (v instanceof Map) return v.size > 0;
    if (v instanceof Safe) return v.s !== '';
    if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.keys(v).length > 0;
    return true;
  };
  const goString = (v: any): string => {
    if (v === null || v === undefined) return '';
    if (v instanceof Safe) return v.s;
    if (Array.isArray(v)) return `[${v.map(goString).join(' ')}]`;
    if (typeof v === 'object') {
      if (typeof v.toString === 'function' && v.toString !== Object.prototype.toString) return String(v);
      return `map[${Object.keys(v)
        .sort()
        .map((k) => `${k}:${goString(v[k])}`)
        .join(' ')}]`;
    }
    return String(v);
  };
  /** A field or method of `v`: Go's exported names (`Title`, `GetString`) find JS ones (`title`, `getString`) too. */
  const member = (v: any, key: string, args: any[] | null): any => {
    if (v === null || v === undefined) return undefined;
    let holder = v;
    let k = key;
    if (v instanceof Map) return v.get(key);
    if (!(k in Object(v))) {
      const lower = k[0].toLowerCase() + k.slice(1);
      if (lower in Object(v)) k = lower;
      else if (typeof v.get === 'function' && !Array.isArray(v)) return args ? undefined : v.get(key);
    }
    const got = holder[k];
    if (typeof got === 'function') return got.apply(holder, args ?? []);
    return got;
  };
  const cmp = (a: any, b: any) => (a instanceof Safe ? a.s : a) === (b instanceof Safe ? b.s : b) || (typeof a === 'number' && typeof b === 'number' && a === b);
  const printf = (format: string, ...args: any[]): string => {
    let n = 0;
    return String(format).replace(/%([-+# 0]*)(\d+)?(?:\.(\d+))?([%vsdqfxXtTeg])/g, (_m, flags: string, width: string, prec: string, verb: string) => {
      if (verb === '%') return '%';
      const a = args[n++];
      let s: string;
      switch (verb) {
        case 'd':
          s = String(Math.trunc(Number(a)));
          break;
        case 'f':
        case 'e':
        case 'g':
          s = verb === 'f' ? Number(a).toFixed(prec !== undefined ? Number(prec) : 6) : verb === 'e' ? Number(a).toExponential(prec !== undefined ? Number(prec) : 6) : String(Number(a));
          break;
        case 'q':
          s = JSON.stringify(goString(a));
          break;
        case 'x':
        case 'X':
          s = typeof a === 'number' ? a.toString(16) : Buffer.from(goString(a)).toString('hex');
          if (verb === 'X') s = s.toUpperCase();
          break;
        case 't':
          s = String(!!a);
          break;
        case 'T':
          s = Array.isArray(a) ? '[]interface {}' : typeof a === 'number' ? (Number.isInteger(a) ? 'int' : 'float64') : typeof a === 'boolean' ? 'bool' : typeof a === 'string' ? 'string' : 'map[string]interface {}';
          break;
        default:
          s = prec !== undefined && verb === 's' ? goString(a).slice(0, Number(prec)) : goString(a);
      }
      if (width && s.length < Number(width)) s = flags.includes('-') ? s.padEnd(Number(width)) : s.padStart(Number(width), flags.includes('0') && verb !== 's' ? '0' : ' ');
      return s;
    });
  };
  const FUNCS: Record<string, (...a: any[]) => any> = {
    and: (...a) => {
      for (const v of a) if (!isTrue(v)) return v;
      return a[a.length - 1];
    },
    or: (...a) => {
      for (const v of a) if (isTrue(v)) return v;
      return a[a.length - 1];
    },
    not: (v) => !isTrue(v),
    len: (v) => (v === null || v === undefined ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : Array.isArray(v) ? v.length : v instanceof Map ? v.size : typeof v === 'object' ? Object.keys(v).length : 0),
    index: (v, ...keys) => {
      for (const k of keys) v = v === null || v === undefined ? undefined : v instanceof Map ? v.get(k) : v[k];
      return v;
    },
    slice: (v, i = 0, j?: number) => (typeof v === 'string' || Array.isArray(v) ? v.slice(i, j) : v),
    print: (...a) => a.map((x, i) => (i > 0 && typeof x !== 'string' && typeof a[i - 1] !== 'string' ? ' ' : '') + goString(x)).join(''),
    println: (...a) => a.map(goString).join(' ') + '\n',
    printf,
    eq: (a, ...bs) => bs.some((b) => cmp(a, b)),
    ne: (a, b) => !cmp(a, b),
    lt: (a, b) => a < b,
    le: (a, b) => a <= b,
    gt: (a, b) => a > b,
    ge: (a, b) => a >= b,
    html: (...a) => new Safe(esc(a.map(goString).join(''))),
    js: (...a) => JSON.stringify(a.map(goString).join('')).slice(1, -1).replace(/</g, '\\u003C').replace(/>/g, '\\u003E').replace(/'/g, "\\'"),
    urlquery: (...a) => encodeURIComponent(a.map(goString).join('')),
    call: (fn, ...a) => fn(...a),
    raw: (s) => new Safe(goString(s)),
  };

  type Scope = { vars: Map<string, any>[] };
  function lookupVar(scope: Scope, name: string): any {
    for (let i = scope.vars.length - 1; i >= 0; i--) if (scope.vars[i].has(name)) return scope.vars[i].get(name);
    throw new TemplateError(`template: undefined variable "${name}"`);
  }
  function setVar(scope: Scope, name: string, v: any, assign: boolean) {
    if (assign) {
      for (let i = scope.vars.length - 1; i >= 0; i--)
        if (scope.vars[i].has(name)) {
          scope.vars[i].set(name, v);
          return;
        }
      throw new TemplateError(`template: undefined variable "${name}"`);
    }
    scope.vars[scope.vars.length - 1].set(name, v);
  }
  function walk(v: any, path: string[], args: any[] | null): any {
    for (let i = 0; i < path.length; i++) v = member(v, path[i], i === path.length - 1 ? args : null);
    return v;
  }
  function evalExpr(e: Expr, dot: any, scope: Scope, args: any[] | null = null, piped?: { v: any }): any {
    switch (e.t) {
      case 'lit':
        return e.v;
      case 'field': {
        const base = e.base ? evalExpr(e.base, dot, scope) : dot;
        if (e.path.length === 0) return base;
        return walk(base, e.path, piped ? [...(args ?? []), piped.v] : args);
      }
      case 'var': {
        const base = lookupVar(scope, e.name);
        if (e.path.length === 0) return base;
        return walk(base, e.path, piped ? [...(args ?? []), piped.v] : args);
      }
      case 'ident': {
        const fn = FUNCS[e.name];
        if (!fn) throw new TemplateError(`template: function "${e.name}" not defined`);
        const all = piped ? [...(args ?? []), piped.v] : (args ?? []);
        return fn(...all);
      }
      case 'pipe': {
        let last: { v: any } | undefined;
        for (const cmd of e.cmds) {
          const [head, ...rest] = cmd;
          const args = rest.map((a) => evalExpr(a, dot, scope));
          if (head.t === 'lit' || (head.t === 'pipe' && rest.length === 0 && !last)) last = { v: evalExpr(head, dot, scope) };
          else last = { v: evalExpr(head, dot, scope, args, last) };
        }
        return last?.v;
      }
    }
  }
  function exec(nodes: Node[], dot: any, scope: Scope, defs: Map<string, Node[]>, out: string[], depth: number): void {
    for (const node of nodes) {
      switch (node.n) {
        case 'text':
          out.push(node.text);
          break;
        case 'out': {
          const v = evalExpr(node.pipe, dot, scope);
          if (node.decl) node.decl.names.forEach((name) => setVar(scope, name, v, node.decl!.assign));
          else out.push(v instanceof Safe ? v.s : esc(goString(v)));
          break;
        }
        case 'if':
        case 'with': {
          const v = evalExpr(node.pipe, dot, scope);
          scope.vars.push(new Map());
          try {
            if (node.decl) node.decl.names.forEach((name) => setVar(scope, name, v, node.decl!.assign));
            if (isTrue(v)) exec(node.then, node.n === 'with' ? v : dot, scope, defs, out, depth);
            else exec(node.else, dot, scope, defs, out, depth);
          } finally {
            scope.vars.pop();
          }
          break;
        }
        case 'range': {
          const v = evalExpr(node.pipe, dot, scope);
          const entries: [any, any][] =
            v === null || v === undefined
              ? []
              : Array.isArray(v)
                ? v.map((x, i) => [i, x])
                : typeof v === 'number'
                  ? Array.from({ length: Math.max(0, v) }, (_x, i) => [i, i])
                  : v instanceof Map
                    ? [...v.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))
                    : typeof v === 'object'
                      ? Object.keys(v)
                          .sort()
                          .map((k) => [k, v[k]])
                      : [];
          if (entries.length === 0) {
            exec(node.else, dot, scope, defs, out, depth);
            break;
          }
          for (const [k, x] of entries) {
            scope.vars.push(new Map());
            try {
              if (node.decl) {
                const names = node.decl.names;
                if (names.length === 1) setVar(scope, names[0], x, false);
                else {
                  setVar(scope, names[0], k, false);
                  setVar(scope, names[1], x, false);
                }
              }
              exec(node.then, x, scope, defs, out, depth);
            } catch (err) {
              if (err === BREAK) break;
              if (err !== CONTINUE) throw err;
            } finally {
              scope.vars.pop();
            }
          }
          break;
        }
        case 'break':
          throw BREAK;
        case 'continue':
          throw CONTINUE;
        case 'template': {
          const body = defs.get(node.name);
          if (!body) throw new TemplateError(`template: no such template "${node.name}"`);
          if (depth > 100) throw new TemplateError('template: exceeded maximum template depth (100)');
          const d = node.pipe ? evalExpr(node.pipe, dot, scope) : undefined;
          exec(body, d, { vars: [new Map([['$', d]])] }, defs, out, depth + 1);
          break;
        }
      }
    }
  }
  function render(parsed: { defs: Map<string, Node[]>; main: string }, data: any, name?: string): string {
    const body = parsed.defs.get(name ?? parsed.main);
    if (!body) throw new TemplateError(`template: no such template "${name ?? parsed.main}"`);
    const out: string[] = [];
    exec(body, data, { vars: [new Map([['$', data]])] }, parsed.defs, out, 0);
    return out.join('');
  }
  return { parse, render, Safe, TemplateError };
}
