/** A template's text and `{{ }}` actions, and an action's words. */
import { TemplateError } from './values.ts';

export type Tok = { kind: 'text'; text: string } | { kind: 'action'; src: string; line: number };
/** A source as text and actions: `{{-` and `-}}` trim the spaces beside them, comments (`{{/* … *\/}}`) are dropped. */
export function lex(src: string, name: string): Tok[] {
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

/** An action's words: string literals whole, `(`, `)`, `|`, `,` and `:=` apart, the rest split at spaces. */
export function words(src: string): string[] {
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
