import { FilterError } from './errors.ts';

export type TokenType = 'string' | 'number' | 'identifier' | 'operator' | 'and' | 'or' | 'lparen' | 'rparen' | 'comma' | 'eof';

export interface Token {
  type: TokenType;
  value: string;
  position: number;
}

// Longest operators first so `?!=` is not read as `?` followed by `!=`.
const OPERATORS = ['?!~', '?!=', '?>=', '?<=', '?=', '?>', '?<', '?~', '!=', '!~', '>=', '<=', '=', '>', '<', '~'];

const IDENT_START = /[A-Za-z_@]/;
const IDENT_PART = /[A-Za-z0-9_.:@]/;
const DIGIT = /[0-9]/;

/** Splits filter text into tokens. Comments (`// …` to the end of the line) and whitespace are skipped. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    const start = i;
    if (c === '(') {
      tokens.push({ type: 'lparen', value: c, position: start });
      i++;
      continue;
    }
    if (c === ')') {
      tokens.push({ type: 'rparen', value: c, position: start });
      i++;
      continue;
    }
    if (c === ',') {
      tokens.push({ type: 'comma', value: c, position: start });
      i++;
      continue;
    }
    if (c === '&' || c === '|') {
      if (text[i + 1] !== c) throw new FilterError(`unexpected "${c}", did you mean "${c}${c}"?`, start);
      tokens.push({ type: c === '&' ? 'and' : 'or', value: c + c, position: start });
      i += 2;
      continue;
    }
    if (c === "'" || c === '"') {
      let value = '';
      i++;
      let closed = false;
      while (i < n) {
        const ch = text[i];
        if (ch === '\\' && i + 1 < n) {
          const next = text[i + 1];
          // Only the quote characters and the backslash itself are escapes; anything else stays as
          // written, so LIKE patterns and regex-looking values survive.
          if (next === c || next === '\\' || next === "'" || next === '"') {
            value += next;
            i += 2;
            continue;
          }
          value += ch;
          i++;
          continue;
        }
        if (ch === c) {
          closed = true;
          i++;
          break;
        }
        value += ch;
        i++;
      }
      if (!closed) throw new FilterError('unterminated string', start);
      tokens.push({ type: 'string', value, position: start });
      continue;
    }
    if (DIGIT.test(c) || (c === '-' && DIGIT.test(text[i + 1] ?? '')) || (c === '.' && DIGIT.test(text[i + 1] ?? ''))) {
      i++;
      while (i < n && DIGIT.test(text[i])) i++;
      if (text[i] === '.' && DIGIT.test(text[i + 1] ?? '')) {
        i++;
        while (i < n && DIGIT.test(text[i])) i++;
      }
      if (i < n && IDENT_START.test(text[i])) throw new FilterError('invalid number', start);
      tokens.push({ type: 'number', value: text.slice(start, i), position: start });
      continue;
    }
    if (IDENT_START.test(c)) {
      i++;
      while (i < n && IDENT_PART.test(text[i])) i++;
      tokens.push({ type: 'identifier', value: text.slice(start, i), position: start });
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op) {
      tokens.push({ type: 'operator', value: op, position: start });
      i += op.length;
      continue;
    }
    throw new FilterError(`unexpected character ${JSON.stringify(c)}`, start);
  }
  tokens.push({ type: 'eof', value: '', position: n });
  return tokens;
}
