import { badRequest } from '../errors.ts';
import { byteOrder } from '../lib/key-order.ts';

/**
 * The `fields` query parameter: which keys of a record (or of each item of a list) to return, with
 * dotted paths into `expand` and PocketBase's `:excerpt(maxLength, withEllipsis)` modifier.
 */

interface Excerpt {
  max: number;
  ellipsis: boolean;
}

export interface FieldsTree {
  all: boolean;
  keys: Map<string, FieldsTree>;
  excerpt?: Excerpt;
}

const EXCERPT = /^([^:]+):excerpt\(\s*([^,()]*?)\s*(?:,\s*([^,()]*?)\s*)?\)$/;
/** Go's strconv.ParseBool spellings, which PocketBase's `withEllipsis` takes. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const KEY = /^(\*|[A-Za-z0-9_@-]+|\w+\(\w+\))$/;

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function emptyTree(): FieldsTree {
  return { all: false, keys: new Map() };
}

export function parseFieldsParam(text: string): FieldsTree | undefined {
  if (text.trim() === '') return undefined;
  if (text.length > 2000) throw badRequest('The fields parameter is too long.');
  const root = emptyTree();
  for (const part of splitTopLevel(text)) {
    let path = part;
    let excerpt: Excerpt | undefined;
    const m = EXCERPT.exec(part);
    if (m) {
      path = m[1];
      const max = /^\d{1,9}$/.test(m[2]) ? Number(m[2]) : 0;
      if (max <= 0) throw badRequest(`Invalid fields parameter entry ${JSON.stringify(part)}: excerpt(max, withEllipsis?) needs a max above 0.`);
      excerpt = { max: Math.min(max, 100000), ellipsis: m[3] !== undefined && TRUE.has(m[3]) };
    }
    const segments = path.split('.');
    if (segments.some((s) => !KEY.test(s))) throw badRequest(`Invalid fields parameter entry ${JSON.stringify(part)}.`);
    let node = root;
    segments.forEach((segment, i) => {
      if (segment === '*') {
        node.all = true;
        return;
      }
      let child = node.keys.get(segment);
      if (!child) {
        child = emptyTree();
        node.keys.set(segment, child);
      }
      if (i === segments.length - 1) {
        if (child.keys.size === 0) child.all = true;
        if (excerpt) child.excerpt = excerpt;
      }
      node = child;
    });
  }
  return sortedTree(root);
}

/**
 * The tree with each level's keys in PocketBase's order: it picks into a map that its encoder writes
 * sorted, so a picked record keeps the record's order. Done once per request, not per record.
 */
function sortedTree(tree: FieldsTree): FieldsTree {
  const keys = new Map([...tree.keys].sort(([a], [b]) => byteOrder(a, b)).map(([k, sub]) => [k, sortedTree(sub)]));
  return { ...tree, keys };
}

// As PocketBase's excerpt reads HTML: these elements' content is not text, inline elements join their
// neighbours, every other element separates words.
const EXCLUDED = new Set(['head', 'style', 'script', 'iframe', 'embed', 'applet', 'object', 'svg', 'img', 'picture', 'dialog', 'template', 'button', 'form', 'textarea', 'input', 'select', 'option']);
const VOID = new Set(['img', 'input', 'embed', 'br', 'hr', 'wbr', 'meta', 'link', 'source', 'area', 'col', 'base', 'track', 'param']);
const INLINE = new Set(['a', 'abbr', 'acronym', 'b', 'bdo', 'big', 'br', 'button', 'cite', 'code', 'em', 'i', 'label', 'q', 'small', 'span', 'strong', 'strike', 'sub', 'sup', 'time']);
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
const TOKEN = /<!--[\s\S]*?(?:-->|$)|<(\/?)([A-Za-z][A-Za-z0-9-]*)\b[^>]*>|[^<]+|</g;

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (whole, name: string) => {
    if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? whole;
    const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** The plain text of an HTML value, whitespace collapsed. */
function plainText(html: string): string {
  let out = '';
  let skipping: string | undefined;
  for (const m of html.matchAll(TOKEN)) {
    const [token, closing, rawName] = m;
    if (token.startsWith('<!--')) continue;
    if (rawName === undefined) {
      if (skipping === undefined) out += decodeEntities(token);
      continue;
    }
    const name = rawName.toLowerCase();
    if (skipping !== undefined) {
      if (closing && name === skipping) skipping = undefined;
      continue;
    }
    if (EXCLUDED.has(name)) {
      if (!closing && !VOID.has(name) && !token.endsWith('/>')) skipping = name;
      continue;
    }
    if (!INLINE.has(name)) out += ' ';
  }
  return out.replace(/\s+/g, ' ').trim();
}

function excerptOf(value: unknown, e: Excerpt): unknown {
  if (typeof value !== 'string') return value;
  const text = plainText(value);
  const chars = [...text];
  if (chars.length <= e.max) return text;
  return chars.slice(0, e.max).join('').trimEnd() + (e.ellipsis ? '...' : '');
}

export function pickFields(value: unknown, tree: FieldsTree): unknown {
  if (tree.excerpt) return excerptOf(value, tree.excerpt);
  if (Array.isArray(value)) return value.map((v) => pickFields(v, tree));
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Record<string, unknown>;
  if (tree.keys.size === 0 && tree.all) return obj;
  const out: Record<string, unknown> = {};
  if (tree.all) Object.assign(out, obj);
  for (const [key, sub] of tree.keys) {
    if (!(key in obj)) continue;
    out[key] = sub.keys.size === 0 && sub.all && !sub.excerpt ? obj[key] : pickFields(obj[key], sub);
  }
  return out;
}
