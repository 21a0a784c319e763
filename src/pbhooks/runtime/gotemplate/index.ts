/**
 * Go's html/template as pb_hooks' `$template` uses it (API contract §22): `parse(sources)` makes a
 * template set (lex.ts → parse.ts), `render(set, data)` runs it (exec.ts).
 *
 * What it reads: text and `{{ }}` actions with `{{-`/`-}}` trimming and `{{/* comments *\/}}`;
 * pipelines of fields (`.a.b`, `$`, `$x.y`, methods called with arguments: `.record.GetString "x"`),
 * literals, parenthesized pipelines and `|` chains; `if`/`else if`/`else`, `range` (with `$i, $e :=`,
 * `else`, `break`, `continue`), `with`, `define`, `template`, `block`, `$x :=` and `$x =`. Functions:
 * Go's (`and or not len index slice print printf println eq ne lt le gt ge html js urlquery call`)
 * and PocketBase's `raw` (funcs.ts). Every value printed is HTML-escaped except what `raw` returns (the
 * whole output is treated as HTML text: no escaping by attribute, script or URL context as Go does).
 */
export { parse, type TemplateSet } from './parse.ts';
export { render } from './exec.ts';
export { Safe, TemplateError } from './values.ts';
