import { quoteIdent } from '../lib/identifiers.ts';

/**
 * A piece of SQL with its parameters in order. Built with the `sql` template tag, so a value can only
 * ever become a `?` parameter; SQL text enters through `raw()` (fixed keywords) or `ident()` (checked
 * names). Composing fragments keeps parameters in the order their placeholders appear.
 */
export class Sql {
  constructor(
    readonly text: string,
    readonly params: readonly unknown[],
  ) {}

  get isEmpty(): boolean {
    return this.text === '';
  }
}

class Raw {
  constructor(readonly text: string) {}
}

/** Trusted SQL text: keywords and fragments built by Cairn itself, never user input. */
export function raw(text: string): Raw {
  return new Raw(text);
}

/** A quoted identifier; the name must already have passed a name check. */
export function ident(name: string): Raw {
  return new Raw(quoteIdent(name));
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  let text = strings[0];
  const params: unknown[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v instanceof Sql) {
      text += v.text;
      params.push(...v.params);
    } else if (v instanceof Raw) {
      text += v.text;
    } else {
      text += '?';
      params.push(v);
    }
    text += strings[i + 1];
  }
  return new Sql(text, params);
}

export function join(parts: readonly Sql[], separator: string): Sql {
  const params: unknown[] = [];
  const texts: string[] = [];
  for (const p of parts) {
    texts.push(p.text);
    params.push(...p.params);
  }
  return new Sql(texts.join(separator), params);
}

/** `?, ?, ?` for an IN list, one parameter per value. */
export function list(values: readonly unknown[]): Sql {
  return new Sql(values.map(() => '?').join(', '), values);
}

export const EMPTY = new Sql('', []);
