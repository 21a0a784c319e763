/**
 * `$template`: Go's html/template (gotemplate.ts). `loadFiles` runs the first file, the others bring
 * their `{{define}}`s; a file that does not parse fails the render, not the load, as PocketBase's.
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import { goTemplate } from './gotemplate.ts';

const goTpl = goTemplate();

function renderer(load: () => { name: string; text: string }[]) {
  let parsed: any;
  let failed: unknown;
  try {
    parsed = goTpl.parse(load());
  } catch (err) {
    failed = err;
  }
  // As PocketBase's: a file that does not parse fails the render, not the load.
  return {
    render: (data: any) => {
      if (failed) throw failed;
      return goTpl.render(parsed, data);
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
