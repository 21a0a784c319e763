/** A parsed template set run with its data. */
import { FUNCS } from './funcs.ts';
import type { Expr, Node, TemplateSet } from './parse.ts';
import { esc, goString, isTrue, member, Safe, TemplateError } from './values.ts';

/** Thrown by `{{break}}` and `{{continue}}`, caught by the range they are in. */
const BREAK = { brk: true };
const CONTINUE = { cont: true };

/** The variables in scope, innermost last: `$` in the first. */
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
/** An expression's value; `args` (and the previous command's value, `piped`) go to the method or function it names. */
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
/** Writes `nodes` run with `dot` to `out`; `depth` counts nested `{{template}}` calls (at most 100). */
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
      case 'range':
        execRange(node, dot, scope, defs, out, depth);
        break;
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
/** Go's order of a range: an array's, a number's count from 0, a map's keys sorted. */
function rangeEntries(v: any): [any, any][] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return v.map((x, i) => [i, x]);
  if (typeof v === 'number') return Array.from({ length: Math.max(0, v) }, (_x, i) => [i, i]);
  if (v instanceof Map) return [...v.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  if (typeof v === 'object')
    return Object.keys(v)
      .sort()
      .map((k) => [k, v[k]]);
  return [];
}

function execRange(node: Extract<Node, { n: 'range' }>, dot: any, scope: Scope, defs: Map<string, Node[]>, out: string[], depth: number): void {
  const entries = rangeEntries(evalExpr(node.pipe, dot, scope));
  if (entries.length === 0) return exec(node.else, dot, scope, defs, out, depth);
  for (const [k, x] of entries) {
    scope.vars.push(new Map());
    try {
      // `$e := ` names the element, `$i, $e := ` the index (or key) and the element.
      const names = node.decl?.names ?? [];
      if (names.length === 1) setVar(scope, names[0], x, false);
      else if (names.length > 1) {
        setVar(scope, names[0], k, false);
        setVar(scope, names[1], x, false);
      }
      exec(node.then, x, scope, defs, out, depth);
    } catch (err) {
      if (err === BREAK) break;
      if (err !== CONTINUE) throw err;
    } finally {
      scope.vars.pop();
    }
  }
}

/** Runs the template `name` (the set's main one unless told) with `data` as its dot and `$`. */
export function render(parsed: TemplateSet, data: any, name?: string): string {
  const body = parsed.defs.get(name ?? parsed.main);
  if (!body) throw new TemplateError(`template: no such template "${name ?? parsed.main}"`);
  const out: string[] = [];
  exec(body, data, { vars: [new Map([['$', data]])] }, parsed.defs, out, 0);
  return out.join('');
}
