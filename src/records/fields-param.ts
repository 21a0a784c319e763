import { badRequest } from '../errors.ts';

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

const EXCERPT = /^([^:]+):excerpt\((\d+)(?:,\s*(true|false))?\)$/;
const KEY = /^(\*|[A-Za-z0-9_@-]+)$/;

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
      excerpt = { max: Math.min(Number(m[2]), 100000), ellipsis: m[3] === 'true' };
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
  return root;
}

function excerptOf(value: unknown, e: Excerpt): unknown {
  if (typeof value !== 'string') return value;
  const text = value.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  const chars = [...text];
  if (chars.length <= e.max) return text;
  return chars.slice(0, e.max).join('') + (e.ellipsis ? '...' : '');
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
