/**
 * `$template`: Go's html/template (gotemplate/). `loadFiles` runs the first file, the others bring
 * their `{{define}}`s; a file that does not parse fails the render, not the load, as PocketBase's.
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import { parse, render, type TemplateSet } from './gotemplate/index.ts';

function renderer(load: () => { name: string; text: string }[]) {
  let parsed: TemplateSet;
  let failed: unknown;
  try {
    parsed = parse(load());
  } catch (err) {
    failed = err;
  }
  // As PocketBase's: a file that does not parse fails the render, not the load.
  return {
    render: (data: any) => {
      if (failed) throw failed;
      return render(parsed, data);
    },
  };
}
export const $template = {
  loadFiles: (...paths: string[]) => renderer(() => paths.flat().map((p) => ({ name: nodePath.basename(String(p)), text: fs.readFileSync(String(p), 'utf8') }))),
  loadString: (...texts: string[]) => renderer(() => texts.flat().map((text, i) => ({ name: i === 0 ? 'string' : `string${i}`, text: String(text) }))),
  loadFS: () => {
    throw new Error('$template.loadFS is not available in Cairn: use $template.loadFiles with paths');
  },
};
