/** Actions' pipelines and the tree of a set of templates. */
import { lex, type Tok, words } from './lex.ts';
import { TemplateError } from './values.ts';

/** An operand or a pipeline of commands (each command a callee and its arguments). */
export type Expr =
  | { t: 'field'; base: Expr | null; path: string[] } // base null: the dot
  | { t: 'var'; name: string; path: string[] }
  | { t: 'lit'; v: any }
  | { t: 'ident'; name: string }
  | { t: 'pipe'; cmds: Expr[][] }; // each command: [callee, ...args]

/** Words up to `closing` (or their end) as a pipeline; `pos` moves past what was read. */
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
/** One word as an operand: `.field`, `$var.field`, a literal (Go's quotes, numbers, booleans, nil) or a function's name. */
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


/** A template's tree: text, an action's output (or assignment), the control structures. */
export type Node =
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

/** Parsed templates by name; `main` is the first source's, what `render` runs unless told. */
export interface TemplateSet {
  defs: Map<string, Node[]>;
  main: string;
}

/** Parses every source into one set: a later source's `{{define}}` replaces an earlier one's. */
export function parse(sources: { name: string; text: string }[]): TemplateSet {
  const defs = new Map<string, Node[]>();
  for (const { name, text } of sources) {
    const top = new FileParser(name, lex(text, name), defs).block([]).nodes;
    // A file's own text is the template named after it (the first one is what render runs).
    if (!defs.has(name) || top.some((n) => n.n !== 'text' || n.text.trim() !== '')) defs.set(name, top);
  }
  return { defs, main: sources[0]?.name ?? '' };
}

/** One source's tokens into nodes; its `{{define}}`s and `{{block}}`s go into `defs`. */
class FileParser {
  private i = 0;

  constructor(
    private readonly name: string,
    private readonly toks: Tok[],
    private readonly defs: Map<string, Node[]>,
  ) {}

  /** Nodes up to one of `ends` (`end`, `else`: the action's whole text is returned), or to the end of the source when none. */
  block(ends: string[]): { nodes: Node[]; end: string } {
    const nodes: Node[] = [];
    while (this.i < this.toks.length) {
      const t = this.toks[this.i++];
      if (t.kind === 'text') {
        nodes.push({ n: 'text', text: t.text });
        continue;
      }
      const kw = /^([a-z]+)\b\s*(.*)$/s.exec(t.src);
      const word = kw?.[1] ?? '';
      const rest = kw?.[2] ?? '';
      if (word === 'end' || word === 'else') {
        if (!ends.includes(word)) throw new TemplateError(`template: ${this.name}:${t.line}: unexpected {{${word}}}`);
        return { nodes, end: t.src };
      }
      if (word === 'if' || word === 'with' || word === 'range') nodes.push(this.branch(word, rest));
      else if (word === 'define' || word === 'block' || word === 'template') {
        const node = this.named(word, rest, t.line);
        if (node) nodes.push(node);
      } else if (t.src === 'break' || t.src === 'continue') nodes.push({ n: t.src });
      else nodes.push({ n: 'out', ...declared(t.src) });
    }
    if (ends.length) throw new TemplateError(`template: ${this.name}: unexpected EOF (an {{end}} is missing)`);
    return { nodes, end: '' };
  }

  /** `if`/`with`/`range` up to its {{end}}; `{{else if …}}` is a nested `if` that shares that {{end}}. */
  private branch(word: 'if' | 'with' | 'range', rest: string): Node {
    const { pipe, decl } = declared(rest);
    const then = this.block(['end', 'else']);
    let otherwise: Node[] = [];
    if (then.end !== 'end') {
      const more = then.end.slice(4).trim();
      const sub = /^(if|with)\s+(.*)$/s.exec(more);
      if (sub && word !== 'range') otherwise = [this.branch(sub[1] as 'if' | 'with', sub[2])];
      else otherwise = this.block(['end']).nodes;
    }
    return { n: word, pipe, decl, then: then.nodes, else: otherwise };
  }

  /** `{{define "x"}}…{{end}}` (no node), `{{block "x" .}}…{{end}}` (defines and calls), `{{template "x" .}}`. */
  private named(word: 'define' | 'block' | 'template', rest: string, line: number): Node | undefined {
    const ws = words(rest);
    const tname = term(ws[0]);
    if (tname.t !== 'lit' || typeof tname.v !== 'string') throw new TemplateError(`template: ${this.name}:${line}: ${word} needs a quoted name`);
    if (word !== 'template') this.defs.set(tname.v, this.block(['end']).nodes);
    if (word === 'define') return undefined;
    return { n: 'template', name: tname.v, pipe: ws.length > 1 ? parsePipeline(ws.slice(1)) : undefined };
  }
}
